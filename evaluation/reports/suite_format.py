"""A suite report as tables (the page) and as one long CSV (the download). Pure.

Every table is a title, a note saying what its numbers mean, columns, and rows of cells; a cell is
text, a number, None (undefined), or a measure {"value", "ci95", ...}. The CSV holds every
measure cell as one line: table, row, column, value, ci95_low, ci95_high, n, note, so that a
script reads any figure without knowing the page's layout.
"""

import csv
import io
from dataclasses import dataclass, field

from evaluation.reports.agreement_format import canonical


@dataclass
class Table:
    title: str
    note: str
    columns: list[str]
    text_columns: int  # the leading columns that name the row
    rows: list[list] = field(default_factory=list)

    @property
    def cells(self) -> list[list[str]]:
        return [[_shown(cell) for cell in row] for row in self.rows]


def suite_tables(report: dict) -> list[Table]:
    build = {"stresstest": _stresstest_tables, "stance": _stance_tables, "cast": _cast_tables}[report["suite"]]
    return build(report)


def suite_csv(report: dict) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["table", "row", "column", "value", "ci95_low", "ci95_high", "n", "note"])
    for table in suite_tables(report):
        for row in table.rows:
            name = " / ".join(str(cell) for cell in row[: table.text_columns])
            for column, cell in zip(table.columns[table.text_columns :], row[table.text_columns :]):
                writer.writerow([table.title, name, column, *_csv_cells(cell)])
    return out.getvalue()


def _csv_cells(cell) -> list:
    if isinstance(cell, dict):
        low, high = cell.get("ci95") or (None, None)
        n = cell.get("trials", cell.get("n", cell.get("shared", "")))
        note = cell.get("reason") or cell.get("ci95_undefined") or ""
        return [_number(cell.get("value")), _number(low), _number(high), n, note]
    return [_number(cell) if not isinstance(cell, str) else cell, "", "", "", ""]


def _number(value):
    return "" if value is None else canonical(value)


def _shown(cell) -> str:
    if isinstance(cell, dict):
        if cell.get("value") is None:
            return f"undefined ({cell.get('reason') or cell.get('ci95_undefined') or 'no data'})"
        text = f"{cell['value']:.3f}"
        if cell.get("ci95"):
            text += f" [{cell['ci95'][0]:.3f}, {cell['ci95'][1]:.3f}]"
        if "successes" in cell and "trials" in cell:
            text += f" ({cell['successes']}/{cell['trials']})"
        return text
    if cell is None:
        return "–"
    if isinstance(cell, float):
        return f"{cell:.3f}"
    return str(cell)


def _measure(value, n=None, reason=None) -> dict:
    """A plain number as a measure cell (no interval)."""
    return {"value": value, "ci95": None, "n": n, "reason": reason}


# StressTest

_SSR_NOTE = (
    "Accuracy: share of answers that chose the gold interpretation, Wilson 95 % interval; the humans' "
    "accuracy pools every listener's answer, their majority vote takes per item the answer most listeners "
    "chose (a tie counts as wrong). A system answer that names no option, or several, counts as wrong and "
    "as a failure. Only items every row answered are compared; the others are listed below the tables."
)
_SSD_NOTE = (
    "Stressed words against the gold stressed words: precision, recall and F1 pooled over every word, and "
    "F1 averaged over items. A prediction that cannot be read counts as predicting no word, and as a failure."
)


def _stresstest_tables(report: dict) -> list[Table]:
    table = report["table"]
    tables = [_ssr_table("SSR: all shared items", table["overall"], _SSR_NOTE)]
    for category, rows in table["per_category"].items():
        tables.append(_ssr_table(f"SSR: category {category or '(none)'}", rows, ""))
    tables.append(_ssd_table(report))
    failures = [
        [name, row["item"], row["failure"]]
        for name, system in report["systems"].items()
        for task in ("ssr", "ssd")
        if system[task]
        for row in system[task]["per_item"]
        if row["failure"]
    ]
    if failures:
        tables.append(
            Table(
                "Answers that could not be read",
                "Each counted wrong (SSR) or as no word (SSD).",
                ["system", "item", "why"],
                3,
                failures,
            )
        )
    if table["items_left_out"]:
        tables.append(
            Table(
                "Items not compared",
                "Not answered by every row (humans and each system).",
                ["item"],
                1,
                [[item] for item in table["items_left_out"]],
            )
        )
    return tables


def _ssr_table(title: str, rows: list[dict], note: str) -> Table:
    return Table(
        title,
        note,
        ["row", "items", "accuracy", "majority-vote accuracy", "failures"],
        1,
        [[row["row"], row["items"], row["accuracy"], row["majority_vote_accuracy"], row["failures"]] for row in rows],
    )


def _ssd_table(report: dict) -> Table:
    rows = []
    humans = report["humans"]["ssd"]
    if humans:
        pooled = humans["pooled"]
        rows.append(
            [
                "humans",
                humans["answers"],
                _measure(pooled["precision"]),
                _measure(pooled["recall"]),
                _measure(pooled["f1"]),
                _measure(humans["item_mean"]["f1"]),
                None,
            ]
        )
    for name, system in report["systems"].items():
        ssd = system["ssd"]
        if ssd is None:  # a system that answered no SSD item
            continue
        pooled = ssd["pooled"]
        rows.append(
            [
                name,
                ssd["items"],
                _measure(pooled["precision"]),
                _measure(pooled["recall"]),
                _measure(pooled["f1"]),
                _measure(ssd["item_mean"]["f1"]),
                ssd["failures"],
            ]
        )
    columns = ["row", "answers", "precision", "recall", "F1", "F1, mean over items", "failures"]
    return Table("SSD: stressed words", _SSD_NOTE, columns, 1, rows)


# StanceBench

_STANCE_NOTE = (
    "Failure rate: answers that do not parse (or are missing) over the 2 expected per instance (one per pole "
    "order). Disagreement: {definition} AUROC and EER of the signed probability (+confidence for P, "
    "-confidence for N, averaged over both orders) against the weak labels, percentile bootstrap 95 % over "
    "instances. Spearman: the judge's signed probabilities against the listeners' consensus on the instances "
    "both scored. The humans' row ranks their consensus scores; their disagreement compares the listeners "
    "under each order."
)


def _stance_tables(report: dict) -> list[Table]:
    definition = report["tables"]["definition"]
    tables = []
    for dimension, rows in sorted(report["tables"]["per_dimension"].items()):
        cells = [
            [
                row["row"],
                row["instances"],
                _measure(row["failure_rate"]),
                _measure(row["disagreement_rate"]),
                row["auroc"],
                row["eer"],
                _spearman(row["spearman"]),
            ]
            for row in rows
        ]
        columns = ["row", "instances", "failure rate", "pole-order disagreement", "AUROC", "EER", "Spearman rho"]
        tables.append(Table(f"Stance: {dimension}", _STANCE_NOTE.format(definition=definition), columns, 1, cells))
    reasons = [
        [name, dimension, reason, count]
        for name, judge in sorted(report["judges"].items())
        for dimension, scores in sorted(judge["scores"]["per_dimension"].items())
        for reason, count in scores["failure_reasons"].items()
    ]
    if reasons:
        tables.append(Table("Structural failures by reason", "", ["judge", "dimension", "why", "answers"], 3, reasons))
    return tables


def _spearman(result: dict | None):
    if result is None:
        return None
    return {"value": result["rho"], "ci95": None, "shared": result["shared"], "reason": result["reason"]}


# CAST

_CAST_NOTE = (
    "Per TTS system, conditioning mode and source of the stressed words (a detector, or the listeners of an "
    "emphasis study over the renditions). Hit = 1[A in Y_A]; Pair-Contrast = 1[A in Y_A and B not in Y_A]; "
    "Pair-Correct = Pair-Contrast on both sides of the pair. Mean over the pairs with both renditions "
    "labelled, percentile bootstrap 95 % over pairs; pairs with a side missing are listed below, not scored."
)
_KAPPA_NOTE = (
    "Cohen's kappa between a detector's and the listeners' binary stressed-word labels over every word of the "
    "renditions both labelled (the detector is only a proxy for listeners). Interval: bootstrap over renditions."
)


def _cast_tables(report: dict) -> list[Table]:
    columns = ["system", "mode", "source", "pairs scored", "Hit", "Pair-Contrast", "Pair-Correct", "Hit, both sides"]
    rows = [
        [
            g["system"],
            g["mode"],
            g["source"],
            g["scored"],
            g["hit"],
            g["pair_contrast"],
            g["pair_correct"],
            g["hit_both"],
        ]
        for g in report["groups"]
    ]
    tables = [Table("CAST scores", _CAST_NOTE, columns, 3, rows)]
    kappas = [
        [
            row["detector"],
            row["listeners"],
            row["renditions"],
            row["words"],
            {
                "value": row["kappa"],
                "ci95": row["bootstrap_ci95"],
                "reason": row["reason"] or row["bootstrap_undefined"],
            },
        ]
        for row in report["detector_vs_listeners"]
    ]
    if kappas:
        tables.append(
            Table(
                "Detector against listeners",
                _KAPPA_NOTE,
                ["detector", "listeners", "renditions", "words", "Cohen's kappa"],
                2,
                kappas,
            )
        )
    missing = [
        [g["system"], g["mode"], g["source"], row["item"], ", ".join(row["sides"])]
        for g in report["groups"]
        for row in g["missing"]
    ]
    if missing:
        tables.append(
            Table(
                "Pairs not scored (a side missing)",
                "No rendition, or no labels for it, on that side.",
                ["system", "mode", "source", "item", "missing sides"],
                5,
                missing,
            )
        )
    return tables
