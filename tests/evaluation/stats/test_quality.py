"""Annotator quality rows and flags from arrays. No database."""

import statistics
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from evaluation.reports.svg import histogram_chart, interval_chart, scatter_chart
from evaluation.stats.annotator_quality import leave_one_out_kappa
from evaluation.stats.quality import Thresholds, annotator_quality, group_medians
from evaluation.stats.study_data import StudyData

CONSENSUS = [[2, 0, 0, 1, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 2, 0, 0, 1], [1, 0, 0, 0, 1, 0]]
CARELESS = [[0, 0, 0, 0, 0, 1]] * 4


def study(*, checks=(), durations=(None, None, None, None)):
    clips = {f"c{i}": {"words": 6, "language": "en", "duration": durations[i]} for i in range(4)}
    annotations = []
    for name, answers, seconds in [
        ("ana", CONSENSUS, 14.0),
        ("ben", CONSENSUS, 11.0),
        ("cleo", CONSENSUS, 9.0),
        ("dan", CARELESS, 1.5),
    ]:
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

    flags = {
        row.annotator: row.flags
        for row in annotator_quality(
            data,
            Thresholds(min_kappa=0.2, min_attention=1.0, min_median_seconds=5.0, max_marked_share=0.2, min_words=1),
        )
    }
    off = {row.annotator: row.flags for row in annotator_quality(data, Thresholds(min_words=1))}

    assert flags["dan"] == ("min_attention", "min_kappa", "min_median_seconds")
    assert flags["ana"] == ("max_marked_share",)  # 7 of 24 words marked
    assert set(off.values()) == {()}


def test_too_quick_compares_time_with_the_clips_duration():
    # dan spends 1.5, 2.5, 3.5, 4.5 s on clips of 1, 1, 2, 2 s and 3 s on a check of 2.5 s; ana 14-17 s.
    data = study(durations=(1.0, 1.0, 2.0, 2.0), checks=[("dan", True, 3.0, 2.5)])

    rows = {row.annotator: row for row in annotator_quality(data, Thresholds(min_time_ratio=1.0))}

    # dan's ratios 1.5, 2.5, 1.75, 2.25, 1.2: median 1.75, at most 3 s a clip yet listening to each.
    assert rows["dan"].median_time_ratio == pytest.approx(1.75) and rows["dan"].flags == ()
    assert rows["ana"].median_time_ratio == pytest.approx((8.5 + 14.0) / 2)  # 14, 15, 8, 8.5
    quick = {row.annotator: row.flags for row in annotator_quality(data, Thresholds(min_time_ratio=2.0))}
    assert quick["dan"] == ("min_time_ratio",) and quick["ana"] == ()


def test_clips_of_unknown_duration_leave_the_ratio_undefined_and_unflagged():
    rows = annotator_quality(study(), Thresholds(min_time_ratio=100.0))

    assert all(row.median_time_ratio is None and row.flags == () for row in rows)
    assert rows[0].median_seconds == 15.5


def test_group_medians_are_statistics_median():
    rng = np.random.default_rng(0)
    group, values = rng.integers(0, 7, size=200), rng.normal(size=200)
    values[rng.random(200) < 0.1] = np.nan

    medians = group_medians(group, values, 9)

    for g in range(9):
        finite = [v for v, h in zip(values.tolist(), group.tolist()) if h == g and not np.isnan(v)]
        assert (medians[g] == statistics.median(finite)) if finite else np.isnan(medians[g])


def test_a_reference_mask_keeps_annotators_out_of_the_others_majority():
    data = study()
    names = list(data.annotator_keys)  # ana, ben, cleo, dan
    everyone = {row.annotator: row for row in annotator_quality(data, Thresholds(min_words=1))}
    no_dan = np.array([name != "dan" for name in names])

    rows = {row.annotator: row for row in annotator_quality(data, Thresholds(min_words=1), reference=no_dan)}

    clips = [{name: levels for c, name, levels in rows_ if name != "dan"} for rows_ in _by_clip(data)]
    # ana, ben, cleo: against the two others of the three; dan: against all three.
    for name in ("ana", "ben", "cleo"):
        assert rows[name].kappa == leave_one_out_kappa(name, clips, min_words=1).kappa
    assert rows["dan"].kappa == everyone["dan"].kappa


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
