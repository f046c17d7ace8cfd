"""Benchmark results as tables and charts (modelzoo.results, evaluation.reports.svg): the
cross-lingual matrix, the data-scale curve, runs side by side, the CSVs. Pure: no database."""

import csv
import io
import xml.etree.ElementTree as ET

from evaluation.reports.svg import curve_chart, heatmap_chart
from modelzoo.results import (
    comparison,
    cross_lingual_matrix,
    data_scale_curve,
    history_rows,
    metric_rows,
    predictions_csv,
    results_csv,
)


def entry(value, low=None, high=None):
    return {"value": value, "low": low, "high": high}


def group(accuracy, f1=0.5, pearson=0.4, clips=12, words=20):
    return {
        "clips": clips,
        "words": words,
        "accuracy": entry(accuracy, accuracy - 0.1, accuracy + 0.05),
        "f1": entry(f1),
        "pearson": entry(pearson),
    }


def run(pk, kind, language="", percent=100, by_language=None, pooled=0.8):
    by_language = by_language or {}
    return {
        "id": pk,
        "label_set": "demo v1",
        "detector": "acoustic",
        "backbone": None,
        "label_mode": "both",
        "setting": {"kind": kind, "language": language, "percent": percent},
        "setting_label": f"{kind} {language}".strip(),
        "metrics": {"pooled": group(pooled), "by_language": {code: group(v) for code, v in by_language.items()}},
    }


def test_the_matrix_takes_cross_lingual_runs_off_the_diagonal_and_monolingual_runs_on_it():
    runs = [
        run(1, "cross-lingual", "en", by_language={"de": 0.6, "es": 0.7}),
        run(2, "cross-lingual", "de", by_language={"en": 0.65}),
        run(3, "monolingual", "en", by_language={"en": 0.9}),
        run(4, "multilingual", by_language={"en": 0.1, "de": 0.1}),  # not part of the matrix
        {**run(5, "cross-lingual", "es"), "metrics": None},  # not finished yet
    ]
    matrix = cross_lingual_matrix(runs, "accuracy")
    assert matrix["rows"] == ["de", "en"] and matrix["columns"] == ["de", "en", "es"]
    values = {cell: round(e["value"], 3) for cell, e in matrix["cells"].items()}
    assert values == {("en", "de"): 0.6, ("en", "es"): 0.7, ("de", "en"): 0.65, ("en", "en"): 0.9}


def test_the_data_scale_curve_is_ordered_by_percent():
    runs = [
        run(1, "data-scale", percent=50, pooled=0.7),
        run(2, "data-scale", percent=10, pooled=0.5),
        run(3, "monolingual", "en"),
    ]
    curve = data_scale_curve(runs, "accuracy")
    assert [(percent, round(e["value"], 3)) for percent, e in curve] == [(10, 0.5), (50, 0.7)]


def test_runs_side_by_side_leave_a_gap_where_a_run_has_no_such_language():
    rows = comparison(
        [
            run(1, "multilingual", by_language={"en": 0.7, "de": 0.6}),
            run(2, "monolingual", "en", by_language={"en": 0.9}),
        ],
        ("accuracy",),
    )
    assert [(row["scope"], row["measure"]) for row in rows] == [
        ("pooled", "accuracy"),
        ("de", "accuracy"),
        ("en", "accuracy"),
    ]
    de = rows[1]["entries"]
    assert de[0]["value"] == 0.6 and de[1] is None


def test_the_results_csv_has_a_row_per_run_scope_and_measure_with_its_interval():
    rows = list(csv.DictReader(io.StringIO(results_csv([run(7, "monolingual", "en", by_language={"en": 0.9})]))))
    assert len(rows) == 2 * 3
    first = rows[0]
    assert (first["run"], first["scope"], first["measure"], first["setting"]) == (
        "7",
        "pooled",
        "accuracy",
        "monolingual en",
    )
    assert float(first["low"]) < float(first["value"]) < float(first["high"])
    assert rows[1]["low"] == ""  # no interval: an empty cell, not "None"


def test_too_few_clips_show_no_interval_even_in_runs_scored_before_the_rule():
    """A group of 1 or 2 clips stored with a bootstrap interval ("1.000 [1.000, 1.000]") loses it
    on the pages, in the matrix and in the CSV, saying why, as the agreement report does."""
    stored = run(8, "monolingual", "en", by_language={"en": 0.9})
    stored["metrics"]["by_language"]["en"]["clips"] = 2

    rows = list(csv.DictReader(io.StringIO(results_csv([stored]))))
    en = next(row for row in metric_rows(stored["metrics"]) if row["scope"] == "en")
    cell = cross_lingual_matrix([stored], "accuracy")["cells"][("en", "en")]

    assert [(row["scope"], row["low"] == "") for row in rows if row["measure"] == "accuracy"] == [
        ("pooled", False),
        ("en", True),
    ]
    assert en["entries"][0][1] == {
        "value": 0.9,
        "low": None,
        "high": None,
        "interval_undefined": "too few clips for an interval: 2 (needs at least 5)",
    }
    assert cell["low"] is None and cell["interval_undefined"].startswith("too few clips")
    chart = heatmap_chart(
        ["en"], ["en"], {("en", "en"): cell}, title="t", row_label="trained on", column_label="tested on"
    )
    assert "0.90*" in chart and "(no interval: too few clips for an interval: 2 (needs at least 5))" in chart


def test_a_heat_map_is_as_wide_as_its_caption():
    """A one-column matrix's caption was cut at the chart's edge ("colour from 0 (ligh")."""
    chart = heatmap_chart(
        ["en"],
        ["en"],
        {("en", "en"): entry(0.5)},
        title="Cross-lingual F1",
        row_label="trained on",
        column_label="tested on",
    )
    width = float(ET.fromstring(chart).get("width"))

    assert width >= 10 + len("rows: trained on; colour from 0 (light) to 1 (dark)") * 6.8


def test_the_predictions_csv_keeps_the_columns_in_order():
    text = predictions_csv(
        [
            {
                "clip_id": "c1",
                "language": "en",
                "variety": "en-GB",
                "word_index": 0,
                "word": "we",
                "binary_true": 1,
                "binary_pred": 0,
                "scalar_true": 0.5,
                "scalar_pred": 0.25,
            }
        ]
    )
    assert text.splitlines() == [
        "clip_id,language,variety,word_index,word,binary_true,binary_pred,scalar_true,scalar_pred",
        "c1,en,en-GB,0,we,1,0,0.5,0.25",
    ]


def test_history_rows_read_epochs_and_the_acoustic_candidates():
    epochs = history_rows([{"epoch": 1, "loss": 0.5, "validation": {"f1": 0.25, "pearson": None}, "best": True}])
    assert epochs == [{"label": "epoch 1", "loss": 0.5, "validation": "f1 0.250, pearson undefined", "best": True}]
    acoustic = history_rows(
        [{"C": 0.1, "validation f1": 0.5, "best": False}, {"alpha": 10.0, "validation pearson": 0.3}]
    )
    assert [(row["label"], row["validation"]) for row in acoustic] == [
        ("C = 0.1", "f1 0.500"),
        ("alpha = 10", "pearson 0.300"),
    ]


def test_the_heat_map_is_valid_svg_with_a_cell_per_pair_and_escaped_labels():
    cells = {("en", "de"): entry(0.61, 0.5, 0.7), ("de", "en"): entry(0.9)}
    svg = heatmap_chart(
        ["de", "en"], ["de", "en"], cells, title="Cross-lingual <F1>", row_label="trained on", column_label="tested on"
    )
    root = ET.fromstring(svg)
    rects = root.findall("{http://www.w3.org/2000/svg}rect")
    assert len(rects) == 4  # a cell for each pair, the empty ones grey
    tips = [rect.find("{http://www.w3.org/2000/svg}title").text for rect in rects]
    assert "trained on en, tested on de: 0.610 [0.500, 0.700]" in tips
    assert "trained on de, tested on de: no result" in tips
    assert "&lt;F1&gt;" in svg and "<F1>" not in svg
    fills = {tip: rect.get("fill") for tip, rect in zip(tips, rects)}
    assert fills["trained on de, tested on en: 0.900"] != fills["trained on en, tested on de: 0.610 [0.500, 0.700]"]


def test_the_curve_draws_a_line_per_measure_with_interval_bars():
    svg = curve_chart(
        [("F1", [(10, 0.4, 0.3, 0.5), (50, 0.6, 0.5, 0.7)]), ("accuracy", [(10, None, None, None)])],
        title="Data scale",
        x_label="% of the training clips",
        y_label="score",
    )
    root = ET.fromstring(svg)
    assert len(root.findall("{http://www.w3.org/2000/svg}polyline")) == 1  # undefined points are left out
    assert len(root.findall("{http://www.w3.org/2000/svg}circle")) == 2 + 2  # points and the legend's dots
    assert "F1 at 50: 0.600 [0.500, 0.700]" in svg
