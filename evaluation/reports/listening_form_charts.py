"""Charts for the form report: pure, from the report dict to inline SVG."""

from evaluation.reports.svg import interval_chart

SERIES = ["accuracy (all answers)", "majority-vote accuracy"]


def _point(score: dict) -> tuple | None:
    if score["value"] is None:
        return None
    low, high = score["ci95"]
    return (score["value"], low, high)


def accuracy_chart(choice_report: dict) -> str:
    """Accuracy and majority-vote accuracy with Wilson 95 % intervals: all
    items, then each group of every metadata breakdown (e.g. stress category)."""
    rows = [("all items", [_point(choice_report["accuracy"]), _point(choice_report["majority_vote_accuracy"])])]
    for key, groups in sorted(choice_report.get("by", {}).items()):
        for value, summary in sorted(groups.items()):
            rows.append((f"{key}={value}", [_point(summary["accuracy"]), _point(summary["majority_vote_accuracy"])]))
    return interval_chart(rows, SERIES, title="Single choice: accuracy with Wilson 95 % intervals")
