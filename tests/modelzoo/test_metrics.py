"""Benchmark metrics against scikit-learn and scipy (pure: no torch)."""

import numpy as np
import pytest
from scipy.stats import pearsonr
from sklearn.metrics import accuracy_score, f1_score

from evaluation.stats.resampling import bootstrap_sums, percentile_interval
from modelzoo.training.metrics import clip_statistics, measures_from_sums, score


def random_rows(seed=0, clips=30):
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(clips):
        language = ("en", "de", "zh")[c % 3]
        for w in range(int(rng.integers(3, 9))):
            truth = rng.random()
            rows.append(
                {
                    "clip_id": f"c{c}",
                    "language": language,
                    "word_index": w,
                    "binary_true": int(truth > 0.7),
                    "binary_pred": int(truth + rng.normal(0, 0.3) > 0.7),
                    "scalar_true": truth,
                    "scalar_pred": truth + rng.normal(0, 0.3),
                }
            )
    return rows


def reference(rows):
    def column(key):
        return np.array([row[key] for row in rows])

    return {
        "accuracy": accuracy_score(column("binary_true"), column("binary_pred")),
        "f1": f1_score(column("binary_true"), column("binary_pred")),
        "pearson": pearsonr(column("scalar_true"), column("scalar_pred")).statistic,
    }


def test_pooled_and_per_language_values_match_scikit_learn_and_scipy():
    rows = random_rows()
    result = score(rows, resamples=0)
    for measure, value in reference(rows).items():
        assert result["pooled"][measure]["value"] == pytest.approx(value, abs=1e-12)
    for language in ("de", "en", "zh"):
        expected = reference([row for row in rows if row["language"] == language])
        for measure, value in expected.items():
            assert result["by_language"][language][measure]["value"] == pytest.approx(value, abs=1e-12)
    assert result["pooled"]["clips"] == 30 and result["pooled"]["words"] == len(rows)


def test_intervals_are_the_agreement_modules_clip_bootstrap():
    rows = random_rows(seed=1)
    result = score(rows, resamples=500, seed=7)
    by_clip = {}
    for row in rows:
        by_clip.setdefault(row["clip_id"], []).append(row)
    per_clip = np.array([clip_statistics(clip_rows) for clip_rows in by_clip.values()])
    resampled = measures_from_sums(bootstrap_sums(per_clip, resamples=500, seed=7))
    for measure in ("accuracy", "f1", "pearson"):
        expected = percentile_interval(resampled[measure])
        entry = result["pooled"][measure]
        assert (entry["low"], entry["high"]) == (expected.low, expected.high)
        assert entry["low"] <= entry["value"] <= entry["high"]
    assert score(rows, resamples=500, seed=7) == result  # same seed, same numbers


def test_undefined_measures_are_none():
    rows = [
        {"clip_id": "a", "language": "en", "binary_true": 0, "binary_pred": 0, "scalar_true": 0.2, "scalar_pred": 0.5},
        {"clip_id": "a", "language": "en", "binary_true": 0, "binary_pred": 0, "scalar_true": 0.4, "scalar_pred": 0.5},
    ]
    pooled = score(rows, resamples=0)["pooled"]
    assert pooled["accuracy"]["value"] == 1.0
    assert pooled["f1"]["value"] is None  # no positives at all
    assert pooled["pearson"]["value"] is None  # constant predictions


def test_too_few_clips_give_the_value_without_an_interval_and_say_why():
    rows = random_rows(clips=6)  # 2 clips a language
    result = score(rows, resamples=200)

    assert result["pooled"]["accuracy"]["low"] is not None and "interval_undefined" not in result["pooled"]["accuracy"]
    for language in ("de", "en", "zh"):
        entry = result["by_language"][language]["accuracy"]
        assert entry["value"] is not None and (entry["low"], entry["high"]) == (None, None)
        assert entry["interval_undefined"] == "too few clips for an interval: 2 (needs at least 5)"


def test_each_group_counts_the_words_emphasized_by_the_labels_and_marked_by_the_detector():
    """What an F1 of 0 means: here the detector marks no word, so TP = 0 and F1 = 0 by definition."""
    rows = [
        {**row, "binary_pred": 0} for row in random_rows(clips=9)
    ]  # a detector that never marks (the acoustic baseline on a set with few emphasized words)
    pooled = score(rows, resamples=0)["pooled"]

    assert pooled["emphasized"] == sum(row["binary_true"] for row in rows) > 0
    assert pooled["marked"] == 0 and pooled["f1"]["value"] == 0.0
