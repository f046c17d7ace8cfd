"""The mismatch review of study items: a clip that participants report as not
matching its transcript leaves assignment until a reviewer clears or excludes it.

The states and the moves between them are written here, once:

    active --(reports reach the study's mismatch_threshold)--> needs_review
    needs_review, excluded --(reviewer: the audio matches)--> cleared
    active, needs_review, cleared --(reviewer: never assign again)--> excluded

The first move happens on the submission hot path, inside the UPDATE that
counts the report (annotation.sql.submission_rows), between the states the model
names (StudyItem.REPORTED_FROM, REPORTED_TO: the statement sits a layer below the
services, so it reads them there) at the study's threshold; `mismatch_sends_to_review`
(written once, in the pure annotation.mismatch_rule, which the reports count by too)
is the same rule in Python, and tests/annotation/test_submission_sql_backends.py
holds the statement to it on both backends. Reviewers' moves go through
`study_item_review_set`.
"""

from django.db.models import QuerySet

from annotation.mismatch_rule import mismatch_sends_to_review
from annotation.models import StudyItem

__all__ = ["REVIEWER_MOVES", "mismatch_sends_to_review", "study_item_review_set"]

Review = StudyItem.Review

# The states a reviewer may move a clip to, each with the states it may come from.
# Clearing an active clip is refused: it would exempt the clip from future reports.
REVIEWER_MOVES: dict[str, tuple[str, ...]] = {
    Review.CLEARED: (Review.NEEDS_REVIEW, Review.EXCLUDED),
    Review.EXCLUDED: (Review.ACTIVE, Review.NEEDS_REVIEW, Review.CLEARED),
}


def study_item_review_set(*, items: QuerySet[StudyItem], state: str) -> int:
    """Move the items that may go to `state` (a reviewer's decision: cleared or
    excluded) there, and leave the others as they are. Returns how many moved.
    One conditional UPDATE, so a clip the hot path sends to review meanwhile is
    judged by the state it has when the update reaches it."""
    if state not in REVIEWER_MOVES:
        raise ValueError(f"A reviewer may set {', '.join(REVIEWER_MOVES)}, not {state!r}.")
    return items.filter(review__in=REVIEWER_MOVES[state]).update(review=state)
