"""The whole report from arrays: consistency with the measures, determinism, undefined cases. No database."""

import json
import random

import krippendorff
import numpy as np
import pytest

from evaluation.reports.agreement import ReportParameters, report_compute
from evaluation.reports.agreement_format import canonical, report_csv, report_json
from evaluation.stats.aggregation import binary_labels, subsample
from evaluation.stats.cohen import average_pairwise_kappa, clip_pair_tables
from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.gwet import gwet_ac
from evaluation.stats.intervals import MIN_UNITS
from evaluation.stats.quality import Thresholds
from evaluation.stats.ratings import binary_counts
from evaluation.stats.simulation import simulated_study
from evaluation.stats.study_data import StudyData

PARAMETERS = ReportParameters(subsample=10, seed=3, resamples=200, thresholds=Thresholds(min_kappa=0.5))


@pytest.fixture(scope="module")
def small():
    return simulated_study(clips=300, seed=1, extra_share=0.2)


@pytest.fixture(scope="module")
def report(small):
    return report_compute(small, PARAMETERS)


def rows_of(data: StudyData):
    clips = {
        key: {
            "words": int(data.clip_words[i]),
            "duration": float(data.clip_durations[i]),
            **{d: data.clip_groups[d][i] for d in data.clip_groups},
            "texts": [data.vocabulary[code] for code in data.word_codes[i, : data.clip_words[i]]],
        }
        for i, key in enumerate(data.clip_keys)
    }
    annotations = [
        (data.clip_keys[c], data.annotator_keys[a], [int(v) for v in levels[: data.clip_words[c]]], bool(m), float(s))
        for c, a, levels, m, s in zip(data.clip, data.annotator, data.levels, data.mismatch, data.seconds)
    ]
    checks = [
        (data.annotator_keys[a], bool(p), float(s), float(d))
        for a, p, s, d in zip(data.check_annotator, data.check_passed, data.check_seconds, data.check_durations)
    ]
    return clips, annotations, checks


def test_the_same_data_and_seed_give_the_same_bytes_whatever_the_row_order(small, report):
    clips, annotations, checks = rows_of(small)
    random.Random(5).shuffle(annotations)
    random.Random(6).shuffle(checks)
    shuffled = StudyData.build(
        study=small.study, clips=dict(reversed(list(clips.items()))), annotations=annotations, checks=checks
    )

    assert report_json(report_compute(shuffled, PARAMETERS)) == report_json(report)
    assert report_json(report_compute(small, PARAMETERS)) == report_json(report)


def test_another_seed_changes_the_subsample_and_the_intervals(small, report):
    other = report_compute(
        small, ReportParameters(subsample=10, seed=4, resamples=200, thresholds=PARAMETERS.thresholds)
    )

    assert other["agreement"]["pooled"]["fleiss"]["value"] != report["agreement"]["pooled"]["fleiss"]["value"]
    assert other["parameters"]["seed"] == 4 and "seed (4)" in other["methods"]["bootstrap"]


def test_groups_pooled_and_per_language_variety_emotion(report):
    agreement = report["agreement"]

    assert set(agreement) == {"pooled", "language", "variety", "emotion"}
    assert sorted(agreement["language"]) == ["de", "en", "es", "fr", "it", "pt", "zh"]
    assert len(agreement["variety"]) == 10
    assert sum(g["clips"] for g in agreement["language"].values()) == agreement["pooled"]["clips"]
    assert sum(g["words"] for g in agreement["emotion"].values()) == agreement["pooled"]["words"]


def used_counts(data: StudyData, report):
    """Level counts of the words used, rebuilt from the report's own choice of clips."""
    short = {row["clip"] for row in report["clips_short"]}
    keys = np.asarray(data.clip_keys, dtype=object)[data.clip]
    names = np.asarray(data.annotator_keys, dtype=object)[data.annotator]
    kept = subsample(keys, names, n=10, seed=PARAMETERS.seed).keep
    assert not any(k in short for k in keys[kept])
    return data.ratings(kept).unit_counts()


def used_rows(data: StudyData, report):
    keys = np.asarray(data.clip_keys, dtype=object)[data.clip]
    return subsample(
        keys, np.asarray(data.annotator_keys, dtype=object)[data.annotator], n=10, seed=PARAMETERS.seed
    ).keep


def test_pooled_numbers_are_the_measures_on_the_subsampled_words(small, report):
    counts, unit_clip = used_counts(small, report)
    rated = counts.sum(axis=1) > 0
    pooled = report["agreement"]["pooled"]

    fleiss = fleiss_kappa(binary_counts(counts[rated]), unit_clip[rated])
    assert pooled["fleiss"]["value"] == pytest.approx(fleiss.value, abs=1e-12)
    assert pooled["fleiss"]["se"] == pytest.approx(fleiss.se, abs=1e-12)
    for metric in ("nominal", "ordinal", "interval", "ratio"):
        expected = krippendorff.alpha(value_counts=counts[rated], level_of_measurement=metric, value_domain=[0, 1, 2])
        assert pooled["krippendorff"][metric]["value"] == pytest.approx(expected, abs=1e-9)
    ac1, ac2 = gwet_ac(binary_counts(counts[rated]), unit_clip[rated]), gwet_ac(counts[rated], weighting="quadratic")
    assert (pooled["gwet"]["ac1"]["value"], pooled["gwet"]["ac1"]["se"]) == pytest.approx(
        (ac1.value, ac1.se), abs=1e-12
    )
    assert pooled["gwet"]["ac2_quadratic"]["value"] == pytest.approx(ac2.value, abs=1e-12)
    assert pooled["gwet"]["ac1"]["value"] > pooled["fleiss"]["value"]  # about 16 % of the words emphasized
    tables = clip_pair_tables(small.ratings(used_rows(small, report)))
    for weighting in ("unweighted", "linear", "quadratic"):
        expected = average_pairwise_kappa(tables, weighting=weighting).value
        assert pooled["cohen"]["levels"][weighting]["value"] == pytest.approx(expected, abs=1e-12)
    assert report["emphasis"]["pooled"]["label_rate"] == pytest.approx(binary_labels(counts[rated]).mean(), abs=1e-12)
    assert sum(report["emphasis"]["scalar_histogram"]["pooled"]) == rated.sum()


def test_every_interval_contains_its_estimate_or_is_explained(report):
    for result in [report["agreement"]["pooled"], *report["agreement"]["language"].values()]:
        for coefficient in (result["fleiss"], *result["gwet"].values()):
            assert coefficient["ci95"][0] < coefficient["value"] < coefficient["ci95"][1]
            independent = coefficient["ci95_words_independent"]
            assert independent[0] < coefficient["value"] < independent[1]
            assert coefficient["bootstrap"]["ci95"][0] < coefficient["bootstrap"]["ci95"][1]
        for metric in result["krippendorff"].values():
            low, high = metric["bootstrap"]["ci95"]
            assert low < high and metric["bootstrap"]["undefined_resamples"] == 0


def test_short_clips_are_listed_and_left_out(small):
    report = report_compute(small, ReportParameters(subsample=11, resamples=0))

    per_clip = np.bincount(small.clip, minlength=len(small.clip_keys))
    expected = [(small.clip_keys[i], int(n)) for i, n in enumerate(per_clip) if n < 11]
    assert 200 < len(expected) < 290  # about 20 % of the clips got 11 or 12 annotations
    assert [(row["clip"], row["annotations"]) for row in report["clips_short"]] == expected
    assert dict(expected) == subsample_short(small, 11)
    assert report["data"]["clips_used"] == len(small.clip_keys) - len(expected)
    assert report["data"]["annotations_used"] == 11 * report["data"]["clips_used"]


def subsample_short(data, n):
    keys = np.asarray(data.clip_keys, dtype=object)[data.clip]
    return subsample(keys, np.asarray(data.annotator_keys, dtype=object)[data.annotator], n=n, seed=0).short


def test_flagged_annotators_can_be_left_out_and_are_named(small, report):
    flagged = report["annotators"]["flagged"]
    assert flagged and report["annotators"]["excluded"] == []

    without = report_compute(
        small,
        ReportParameters(subsample=10, seed=3, resamples=0, exclude_flagged=True, thresholds=PARAMETERS.thresholds),
    )

    assert without["annotators"]["excluded"] == flagged
    names = np.asarray(small.annotator_keys)[small.annotator]
    assert without["data"]["annotations_of_excluded_annotators"] == int(np.isin(names, flagged).sum())
    assert without["data"]["clips_short"] > report["data"]["clips_short"]
    assert without["agreement"]["pooled"]["krippendorff"]["ordinal"]["bootstrap"] is None  # no resamples


def only_language(data: StudyData, language: str) -> StudyData:
    clips, annotations, checks = rows_of(data)
    kept = {key for key, meta in clips.items() if meta["language"] == language}
    return StudyData.build(
        study=data.study,
        clips={k: v for k, v in clips.items() if k in kept},
        annotations=[row for row in annotations if row[0] in kept],
        checks=checks,
    )


def without_light_interval(result: dict) -> dict:
    return {**result, "cohen": {k: v for k, v in result["cohen"].items() if k != "bootstrap"}}


def test_groups_with_the_same_annotations_get_identical_intervals(small, report):
    agreement = report["agreement"]
    # German, French, Italian and Mandarin have one variety each: the same clips under two names.
    # Light's kappa has its interval per language only (LIGHT_INTERVAL_DIMENSIONS).
    for language in ("de", "fr", "it", "zh"):
        by_language, by_variety = agreement["language"][language], agreement["variety"][language]
        assert by_language["cohen"]["bootstrap"]["ci95"] is not None and by_variety["cohen"]["bootstrap"] is None
        assert without_light_interval(by_language) == without_light_interval(by_variety)
    assert agreement["language"]["de"]["fleiss"]["bootstrap"]["ci95"] is not None
    # A report of German alone resamples German's clips as the whole study's report does.
    german = report_compute(only_language(small, "de"), PARAMETERS)
    assert german["agreement"]["pooled"] == agreement["language"]["de"]


def test_too_few_clips_give_the_measure_and_say_why_there_is_no_interval(small):
    few = only_language(small, "de")
    four = StudyData.build(
        study="four",
        clips={k: v for k, v in rows_of(few)[0].items() if k in few.clip_keys[:4]},
        annotations=[r for r in rows_of(few)[1] if r[0] in few.clip_keys[:4]],
    )

    pooled = report_compute(four, ReportParameters(subsample=None, resamples=100))["agreement"]["pooled"]

    reason = f"too few clips for an interval: 4 (needs at least {MIN_UNITS})"
    for coefficient in (pooled["fleiss"], *pooled["gwet"].values()):
        assert coefficient["value"] is not None and coefficient["se"] is not None
        assert (coefficient["ci95"], coefficient["ci95_undefined"]) == (None, reason)
        assert coefficient["ci95_words_independent"] is not None  # 60 words
        assert coefficient["bootstrap"] == {"ci95": None, "se": None, "undefined_resamples": 0, "undefined": reason}
    assert pooled["krippendorff"]["ordinal"]["bootstrap"]["undefined"] == reason


def test_every_annotation_is_used_without_subsampling(small):
    everything = report_compute(small, ReportParameters(subsample=None, resamples=0))

    assert everything["data"]["annotations_used"] == small.n_annotations
    assert everything["clips_short"] == []


def undefined_study():
    """Language "xx": nobody marks anything; "yy": one annotator per clip."""
    clips = {f"x{i}": {"words": 4, "language": "xx"} for i in range(3)}
    clips |= {f"y{i}": {"words": 4, "language": "yy"} for i in range(3)}
    annotations = [(f"x{i}", f"a{j}", [0, 0, 0, 0], False, 5.0) for i in range(3) for j in range(3)]
    annotations += [(f"y{i}", "a0", [1, 0, 2, 0], False, 5.0) for i in range(3)]
    return StudyData.build(study="odd", clips=clips, annotations=annotations)


def test_undefined_measures_are_null_with_a_reason_never_one_or_a_crash():
    report = report_compute(undefined_study(), ReportParameters(subsample=None, resamples=50))

    silent = report["agreement"]["language"]["xx"]
    assert silent["fleiss"]["value"] is None and "one category" in silent["fleiss"]["undefined"]
    assert silent["cohen"]["value"] is None and "0/0" in silent["cohen"]["undefined"]
    for metric in silent["krippendorff"].values():
        assert metric["value"] is None and "expected disagreement is 0" in metric["undefined"]
    for gwet in silent["gwet"].values():
        assert gwet["value"] is None and gwet["undefined"].startswith("every rating is in one category")
        assert gwet["ci95_undefined"] is None and gwet["bootstrap"] is None
    for kappa in silent["cohen"]["levels"].values():
        assert kappa["value"] is None and "0/0" in kappa["undefined"]
    alone = report["agreement"]["language"]["yy"]
    assert alone["fleiss"]["undefined"] == "no unit has two or more ratings"
    assert (
        alone["gwet"]["ac1"]["undefined"] == alone["gwet"]["ac2_quadratic"]["undefined"] == alone["fleiss"]["undefined"]
    )
    assert alone["cohen"]["undefined"] == "no two annotators labelled a common word"
    assert alone["cohen"]["levels"]["linear"]["undefined"] == "no two annotators labelled a common word"
    assert "NaN" not in report_json(report)


def test_an_empty_study_gives_a_report():
    empty = StudyData.build(study="empty", clips={"c": {"words": 3}}, annotations=[])

    report = report_compute(empty, ReportParameters(resamples=10))

    assert report["agreement"]["pooled"]["fleiss"]["value"] is None
    assert report["clips_short"] == [{"clip": "c", "annotations": 0}]
    report_json(report)


def test_progress_reports_every_step():
    seen = []

    report_compute(
        undefined_study(),
        ReportParameters(subsample=None, resamples=0),
        progress=lambda phase, done, total: seen.append((phase, done, total)),
    )

    assert [done for _, done, _ in seen] == list(range(len(seen)))
    assert {total for _, _, total in seen} == {len(seen)}
    assert seen[0][0] == "annotator quality" and seen[2][0] == "agreement: pooled"


def test_canonical_json_rounds_sorts_and_refuses_nan():
    assert report_json({"b": 1 / 3, "a": -0.0, "c": np.float64(2.5), "d": [np.int64(2), True]}) == (
        '{\n  "a": 0.0,\n  "b": 0.3333333333,\n  "c": 2.5,\n  "d": [\n    2,\n    true\n  ]\n}\n'
    )
    with pytest.raises(ValueError, match="undefined"):
        canonical({"x": float("nan")})


def test_csv_has_a_row_for_every_group_and_measure(report):
    lines = report_csv(report).splitlines()

    assert lines[0] == "section,dimension,group,measure,value,se,ci_low,ci_high,method,clips,words,note"
    groups = 1 + sum(len(report["agreement"][d]) for d in ("language", "variety", "emotion"))
    for measure, rows in (
        ("fleiss", 3),
        ("gwet_ac1", 3),
        ("gwet_ac2_quadratic", 3),
        ("krippendorff_ratio", 1),
        ("cohen_levels_quadratic", 1),
    ):
        assert (
            len([line for line in lines if line.startswith("agreement,") and f",{measure}," in line]) == rows * groups
        )
    assert any(line.startswith("annotator,annotator,") for line in lines)
    assert json.loads(report_json(report)) == canonical(report)


def test_a_group_whose_clips_are_all_short_is_reported_undefined():
    clips = {"a": {"words": 3, "language": "de"}, "b": {"words": 3, "language": "fr"}}
    annotations = [("a", f"p{i}", [1, 0, 0], False, 5.0) for i in range(3)] + [("b", "p0", [0, 1, 0], False, 5.0)]

    report = report_compute(
        StudyData.build(study="s", clips=clips, annotations=annotations), ReportParameters(subsample=3, resamples=20)
    )

    french = report["agreement"]["language"]["fr"]
    assert (french["clips"], french["words"], french["fleiss"]["value"]) == (0, 0, None)
    assert report["emphasis"]["language"]["fr"]["label_rate"] is None
    assert report["clips_short"] == [{"clip": "b", "annotations": 1}]


def test_light_kappa_has_its_clip_bootstrap_interval_pooled_and_per_language(small, report):
    from evaluation.stats.light_bootstrap import clip_pair_statistics, light_kappa_resampled
    from evaluation.stats.resampling import percentile_interval
    from evaluation.stats.selection import select_annotations

    pooled = report["agreement"]["pooled"]["cohen"]
    low, high = pooled["bootstrap"]["ci95"]
    assert low < pooled["value"] < high
    # The same interval as the bootstrap run on its own over the report's annotations.
    selection = select_annotations(
        small, thresholds=PARAMETERS.thresholds, exclude_flagged=False, n=PARAMETERS.subsample, seed=PARAMETERS.seed
    )
    ratings = small.ratings(selection.kept)
    counts, unit_clip = ratings.unit_counts()
    clips = np.unique(unit_clip[counts.sum(axis=1) > 0])
    statistics = clip_pair_statistics(clip_pair_tables(ratings), clips)
    values = light_kappa_resampled(statistics, resamples=PARAMETERS.resamples, seed=PARAMETERS.seed)
    interval = percentile_interval(values)
    assert [interval.low, interval.high] == [low, high]
    assert all(group["cohen"]["bootstrap"]["ci95"] for group in report["agreement"]["language"].values())
