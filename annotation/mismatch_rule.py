"""When mismatch reports send a clip to review: the rule, once. Pure Python (no Django), so that the
statistics (evaluation.stats.emphasis, which the reports count by) use it as the submit path does.

The submit path applies it in its UPDATE (annotation.sql.submission_rows, which
tests/annotation/test_submission_sql_backends.py holds to it on both backends); the states it moves a
clip between are annotation.services.study_item_review's.
"""


def mismatch_sends_to_review(*, reports: int, threshold: int) -> bool:
    """Whether an active clip with this many mismatch reports leaves assignment for review."""
    return reports >= threshold
