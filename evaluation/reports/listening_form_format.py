"""A listening-form report in long form: one measure a row, and that as CSV. Pure.

The report is the dict of evaluation.selectors.listening_form_reports.listening_form_report_data, or the
same read back from its stored canonical JSON (evaluation.reports.agreement_format.report_json):
the rows do not depend on the order of the report's keys, so both give the same rows.
"""

import csv
import io

COLUMNS = ["section", "group", "item", "measure", "value", "ci95_low", "ci95_high", "n"]
# evaluation.stats.listening_forms.form_agreement's order; the stored JSON has its keys sorted.
AGREEMENT_ORDER = ["single_choice", "pairwise", "stance", "stressed_words"]


def report_csv(report: dict) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerows([COLUMNS, *report_rows(report)])
    return buffer.getvalue()


def report_rows(report: dict) -> list[list]:
    """The report in long form, one measure a row (COLUMNS); an empty item means a summary row."""
    rows = []

    def add(section, group, item, measure, value, ci=None, n=""):
        low, high = ci or ("", "")
        rows.append([section, group, item, measure, "" if value is None else value, low, high, n])

    if choice := report.get("single_choice"):
        _single_choice_rows(choice, add)
    if marked := report.get("stressed_words"):
        _stressed_word_rows(marked, add)
    if rating := report.get("rating"):
        for system, scores in rating["per_system"].items():
            add("rating", f"system={system}", "", "mos", scores["mean"], scores["ci95"], scores["n"])
        for row in rating["per_item"]:
            add("rating", f"system={row['system']}", row["item"], "mos", row["mean"], row["ci95"], row["n"])
    if pairwise := report.get("pairwise"):
        _pairwise_rows(pairwise, add)
    if stance := report.get("stance"):
        _stance_rows(stance, add)
    agreement = report["agreement"]
    for item_type in [name for name in AGREEMENT_ORDER if name in agreement]:
        kappa = agreement[item_type]
        add("agreement", item_type, "", "fleiss_kappa", kappa["kappa"], kappa["ci95"], kappa["units"])
    return rows


def _proportion(add, section, group, item, measure, scores):
    add(section, group, item, measure, scores["value"], scores["ci95"], scores["trials"])


def _single_choice_rows(choice: dict, add) -> None:
    groups = [("all", choice)] + [(f"{k}={v}", s) for k, values in choice["by"].items() for v, s in values.items()]
    for group, scores in groups:
        _proportion(add, "single_choice", group, "", "accuracy", scores["accuracy"])
        _proportion(add, "single_choice", group, "", "majority_vote_accuracy", scores["majority_vote_accuracy"])
        add("single_choice", group, "", "tied_items", scores["tied_items"], n=scores["items"])
    for row in choice["per_item"]:
        add("single_choice", "", row["item"], "correct_answers", row["correct"], n=row["answers"])
        add("single_choice", "", row["item"], "majority_correct", int(row["majority_correct"]), n=row["answers"])


def _stressed_word_rows(marked: dict, add) -> None:
    for group, scores in (
        ("pooled", marked["pooled"]),
        ("item mean", marked["item_mean"]),
        ("participant mean", marked["participant_mean"]),
    ):
        for measure in ("precision", "recall", "f1"):
            n = scores.get(f"{measure}_n", marked["answers"])  # averages: how many were defined
            add("stressed_words", group, "", measure, scores[measure], n=n)
    for row in marked["per_item"]:
        for measure in ("precision", "recall", "f1"):
            add("stressed_words", "", row["item"], measure, row[measure], n=row["answers"])


def _pairwise_rows(pairwise: dict, add) -> None:
    groups = [("all", "", pairwise["overall"])] + [("", row["item"], row) for row in pairwise["per_item"]]
    groups += [(f"{k}={v}", "", s) for k, values in pairwise["by"].items() for v, s in values.items()]
    for group, item, scores in groups:
        _proportion(add, "pairwise", group, item, "prefer_a", scores["prefer_a"])
        add("pairwise", group, item, "p_value_binomial", scores["p_value"], n=scores["a"] + scores["b"])
        add("pairwise", group, item, "no_preference", scores["no_preference"])


def _stance_rows(stance: dict, add) -> None:
    for dimension, scores in stance["per_dimension"].items():
        score = scores["score"]
        add("stance", dimension, "", "signed_score", score["mean"], score["ci95"], scores["items"])
        disagreement = scores["disagreement"]
        add(
            "stance",
            dimension,
            "",
            "pole_order_disagreement",
            disagreement["rate"],
            n=disagreement["items_with_both_orders"],
        )
        # Reports stored before the count was added lack it: no row rather than a wrong 0.
        if "items_lacking_one_order" in disagreement:
            add(
                "stance",
                dimension,
                "",
                "items_lacking_one_order",
                disagreement["items_lacking_one_order"],
                n=scores["items"],
            )
    for row in stance["per_item"]:
        add("stance", row["dimension"], row["item"], "consensus", row["consensus"], n=row["answers"])
