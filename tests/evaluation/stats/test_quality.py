"""Annotator quality rows and flags from arrays. No database."""

import xml.etree.ElementTree as ET

import pytest

from evaluation.reports.svg import histogram_chart, interval_chart, scatter_chart
from evaluation.stats.annotator_quality import leave_one_out_kappa
from evaluation.stats.quality import Thresholds, annotator_quality
from evaluation.stats.study_data import StudyData

CONSENSUS = [[2, 0, 0, 1, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 2, 0, 0, 1], [1, 0, 0, 0, 1, 0]]
CARELESS = [[0, 0, 0, 0, 0, 1]] * 4


def study(*, checks=()):
    clips = {f"c{i}": {"words": 6, "language": "en"} for i in range(4)}
    annotations = []
    for name, answers, seconds in [("ana", CONSENSUS, 14.0), ("ben", CONSENSUS, 11.0), ("cleo", CONSENSUS, 9.0),
                                   ("dan", CARELESS, 1.5)]:  # fmt: skip
        annotations += [(f"c{i}", name, levels, False, seconds + i) for i, levels in enumerate(answers)]
    return StudyData.build(study="q", clips=clips, annotations=annotations, checks=list(checks))


def test_kappa_is_annotator_quality_leave_one_out_kappa():
    data = study()
    clips = [{name: levels for c, name, levels, *_ in rows} for rows in _by_clip(data)]

    rows = annotator_quality(data, Thresholds(min_words=1))

    for row in rows:
        expected = leave_one_out_kappa(row.annotator, clips, min_words=1)
        assert (row.kappa, row.kappa_reason, row.kappa_words) == (expected.kappa, expected.reason, expected.words)


def _by_clip(data):
    grouped = {}
    for c, a, levels in zip(data.clip, data.annotator, data.levels):
        grouped.setdefault(c, []).append((c, data.annotator_keys[a], list(levels[: data.clip_words[c]])))
    return grouped.values()


def test_shares_checks_and_median_time():
    data = study(checks=[("dan", False, 2.0), ("dan", True, 3.0), ("ana", True, 20.0)])

    rows = {row.annotator: row for row in annotator_quality(data, Thresholds())}

    assert rows["ana"].marked_share == pytest.approx(7 / 24)
    assert (rows["dan"].checks_passed, rows["dan"].checks_total, rows["dan"].attention_share) == (1, 2, 0.5)
    assert rows["ben"].attention_share is None
    assert rows["ana"].median_seconds == 16.0  # 14, 15, 16, 17 and a check of 20
    assert rows["dan"].median_seconds == 2.75  # 1.5, 2.5, 3.5, 4.5 and checks of 2 and 3
    assert rows["dan"].clips == 4 and rows["dan"].words == 24


def test_every_threshold_crossed_is_a_flag_and_none_is_off():
    data = study(checks=[("dan", False, 2.0)])

    flags = {row.annotator: row.flags for row in annotator_quality(
        data, Thresholds(min_kappa=0.2, min_attention=1.0, min_median_seconds=5.0, max_marked_share=0.2, min_words=1)
    )}  # fmt: skip
    off = {row.annotator: row.flags for row in annotator_quality(data, Thresholds(min_words=1))}

    assert flags["dan"] == ("min_attention", "min_kappa", "min_median_seconds")
    assert flags["ana"] == ("max_marked_share",)  # 7 of 24 words marked
    assert set(off.values()) == {()}


def test_an_undefined_kappa_flags_nothing():
    rows = annotator_quality(study(), Thresholds(min_kappa=0.99))  # 24 words pooled: enough for the default 20

    assert all(row.kappa is not None for row in rows)
    lonely = annotator_quality(study(), Thresholds(min_kappa=0.99, min_words=100))
    assert all(row.kappa is None and row.flags == () for row in lonely)


def test_charts_are_well_formed_and_escape_labels():
    charts = [
        interval_chart(
            [("<all>", [(0.4, 0.3, 0.5), None]), ("zh & co", [(-0.1, -0.3, 0.1), (0.2, None, None)])],
            ["Fleiss' kappa", "alpha"],
            title="A & B",
        ),
        histogram_chart([i / 20 for i in range(21)], list(range(20)), title="scores"),
        scatter_chart([(0.1, 0.5, False, "a<b"), (0.3, -0.2, True, "x")], title="t", x_label="x", y_label="y"),
        scatter_chart([], title="empty", x_label="x", y_label="y"),
        histogram_chart([0.0, 0.5, 1.0], [0, 0], title="no words"),
    ]

    for chart in charts:
        root = ET.fromstring(chart)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "&lt;all&gt;" in charts[0] and "zh &amp; co" in charts[0] and "undefined" in charts[0]
