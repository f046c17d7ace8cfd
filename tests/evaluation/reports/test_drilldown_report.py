"""The report's drill-down section from arrays: consistent with the pooled figures, in order, in the CSV."""

import csv
import io

import krippendorff
import numpy as np
import pytest

from evaluation.reports.agreement import ReportParameters, report_compute
from evaluation.reports.agreement_format import canonical, report_csv
from evaluation.reports.drilldown import CLIP_COLUMNS, FREQUENT_WORD_MIN, PAIRS
from evaluation.stats.aggregation import subsample
from evaluation.stats.quality import Thresholds
from evaluation.stats.simulation import simulated_study

PARAMETERS = ReportParameters(subsample=8, seed=2, resamples=50, thresholds=Thresholds(min_kappa=0.5))


@pytest.fixture(scope="module")
def data():
    return simulated_study(clips=240, per_clip=8, words=9, seed=4, extra_share=0.2)


@pytest.fixture(scope="module")
def report(data):
    return canonical(report_compute(data, PARAMETERS))


def test_every_used_clip_has_a_row_lowest_agreement_first(report):
    clips = report["drilldown"]["clips"]
    rows = [dict(zip(clips["columns"], row)) for row in clips["rows"]]

    assert clips["columns"] == list(CLIP_COLUMNS)
    assert len(rows) == report["agreement"]["pooled"]["clips"]
    assert sum(row["words"] for row in rows) == report["agreement"]["pooled"]["words"]
    assert {row["annotators"] for row in rows} == {8}  # subsampled to 8 a clip
    values = [row["agreement"] for row in rows if row["agreement"] is not None]
    assert values == sorted(values) and values[0] < values[-1]
    assert all(row["agreement_measure"] in ("fleiss_kappa", "observed_agreement") for row in rows)


def test_a_clip_row_is_that_clip_alone_by_the_reference_library(data, report):
    clips = report["drilldown"]["clips"]
    row = dict(zip(clips["columns"], clips["rows"][0]))
    # The report's subsample (same n and seed), the clip's kept annotations only
    keys = np.asarray(data.clip_keys, dtype=object)[data.clip]
    names = np.asarray(data.annotator_keys, dtype=object)[data.annotator]
    keep = subsample(keys, names, n=8, seed=2).keep & (keys == row["clip"])
    levels = data.levels[keep][:, :9].astype(float)
    expected = krippendorff.alpha(reliability_data=levels, level_of_measurement="ordinal", value_domain=[0, 1, 2])
    assert row["alpha_ordinal"] == pytest.approx(expected, abs=1e-9)
    assert row["marked_share"] == pytest.approx(float((levels > 0).mean()), abs=1e-9)


def test_positions_words_and_pairs(report):
    drilldown = report["drilldown"]
    assert [row["position"] for row in drilldown["positions"]] == list(range(1, 10))
    assert sum(row["words"] for row in drilldown["positions"]) == report["agreement"]["pooled"]["words"]
    words = drilldown["words"]["rows"]
    assert words and all(row["words"] >= FREQUENT_WORD_MIN for row in words)
    assert [row["words"] for row in words] == sorted((row["words"] for row in words), reverse=True)
    pairs = drilldown["pairs"]
    assert len(pairs) == PAIRS and pairs[0]["clips"] >= pairs[-1]["clips"]
    assert all(sum(map(sum, row["confusion"])) == row["words"] for row in pairs)


def test_csv_carries_the_drilldown(report):
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    sections = {row["section"] for row in rows}
    assert {"clip", "word_position", "word", "annotator_pair"} <= sections
    first = report["drilldown"]["clips"]["rows"][0]
    agreement = [r for r in rows if r["section"] == "clip" and r["group"] == first[0] and r["measure"] == "agreement"]
    assert float(agreement[0]["value"]) == pytest.approx(first[3]) and agreement[0]["note"] == first[4]
    assert (
        len([r for r in rows if r["section"] == "annotator_pair" and r["measure"].startswith("confusion_")])
        == 9 * PAIRS
    )


def test_a_report_stored_before_the_drilldown_still_makes_its_csv(report):
    old = {key: value for key, value in report.items() if key != "drilldown"}
    assert not [line for line in report_csv(old).splitlines() if line.startswith("clip,")]
