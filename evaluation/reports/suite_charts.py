"""The plots of a suite page, drawn on the server from the report's JSON. Pure."""

from evaluation.reports.svg import interval_chart, roc_chart


def suite_charts(report: dict) -> list[str]:
    draw = {"stresstest": _stresstest_charts, "stance": _stance_charts, "cast": _cast_charts}[report["suite"]]
    return draw(report)


def _point(measure: dict | None) -> tuple | None:
    if not measure or measure.get("value") is None:
        return None
    low, high = measure["ci95"] if measure.get("ci95") else (None, None)
    return measure["value"], low, high


def _stresstest_charts(report: dict) -> list[str]:
    rows = report["table"]["overall"]
    if not rows:
        return []
    bars = [(row["row"], [_point(row["accuracy"])]) for row in rows]
    return [interval_chart(bars, ["SSR accuracy"], title="SSR accuracy on the shared items (Wilson 95 %)")]


def _stance_charts(report: dict) -> list[str]:
    charts = []
    for dimension in sorted(report["tables"]["per_dimension"]):
        series = [
            (name, curve["fpr"], curve["tpr"])
            for name, judge in sorted(report["judges"].items())
            if (curve := judge["scores"]["per_dimension"].get(dimension, {}).get("roc"))
        ]
        series += [  # the listeners' consensus ranked against the same weak labels
            ("humans", row["roc"]["fpr"], row["roc"]["tpr"])
            for row in report["tables"]["per_dimension"][dimension]
            if row["kind"] == "human" and row.get("roc")
        ]
        if series:
            charts.append(roc_chart(series, title=f"ROC against the weak labels: {dimension}"))
    return charts


def _cast_charts(report: dict) -> list[str]:
    if not report["groups"]:
        return []
    rows = [
        (
            f"{g['system']} / {g['mode']} / {g['source']}",
            [_point(g["pair_correct"]), _point(g["pair_contrast"]), _point(g["hit"])],
        )
        for g in report["groups"]
    ]
    return [
        interval_chart(rows, ["Pair-Correct", "Pair-Contrast", "Hit"], title="CAST scores (bootstrap 95 % over pairs)")
    ]
