"""ROC points, AUROC and EER by hand and against sklearn; the bootstrap over instances. No database."""

import json

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve

from evaluation.stats.resampling import generator
from evaluation.stats.suites.roc import equal_error_rate, roc_points, roc_scores


def eer_from_sklearn(labels, scores):
    """An independent EER: FPR where FPR - FNR crosses 0, interpolated on sklearn's (trimmed) ROC."""
    fpr, tpr, _ = roc_curve(labels, scores)
    return float(np.interp(0.0, fpr - (1 - tpr), fpr))


def tied_data(seed, n=60):
    rng = np.random.default_rng(seed)
    labels = rng.random(n) < 0.4
    return labels, np.round(rng.normal(size=n) + labels, 1)  # rounded: many ties, some across classes


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_auroc_eer_and_points_match_sklearn_with_ties(seed):
    labels, scores = tied_data(seed)
    result = roc_scores(labels, scores, resamples=0, seed=0)

    assert result["auroc"]["value"] == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    assert result["eer"]["value"] == pytest.approx(eer_from_sklearn(labels, scores), abs=1e-12)
    fpr, tpr, thresholds = roc_curve(labels, scores, drop_intermediate=False)
    assert result["roc"]["fpr"] == pytest.approx(fpr.tolist()) and result["roc"]["tpr"] == pytest.approx(tpr.tolist())
    assert result["roc"]["thresholds"][0] is None and result["roc"]["thresholds"][1:] == thresholds[1:].tolist()
    assert (result["positives"], result["negatives"]) == (int(labels.sum()), int((~labels).sum()))


def test_by_hand():
    # positive 0.9 beats both negatives, 0.4 beats 0.1 only: AUROC 3/4; points (0, .5), (.5, .5), (.5, 1), (1, 1)
    result = roc_scores([1, 1, 0, 0], [0.9, 0.4, 0.6, 0.1], resamples=0, seed=0)
    assert result["auroc"]["value"] == 0.75 and result["eer"]["value"] == 0.5
    assert result["roc"]["fpr"] == [0, 0, 0.5, 0.5, 1] and result["roc"]["tpr"] == [0, 0.5, 0.5, 1, 1]


def test_a_tie_across_classes_is_a_diagonal_step():
    result = roc_scores([1, 0], [0.5, 0.5], resamples=0, seed=0)
    assert result["roc"]["fpr"] == [0, 1] and result["roc"]["tpr"] == [0, 1]
    assert result["auroc"]["value"] == 0.5 and result["eer"]["value"] == 0.5  # midway along the diagonal


def test_eer_interpolates_between_points():
    # points (0, 0), (.5, 0), (.5, 1), (1, 1): FPR - FNR goes -1, -.5, .5; it is 0 halfway up the vertical step
    assert equal_error_rate(np.array([0, 0.5, 0.5, 1]), np.array([0, 0, 1, 1]))[0] == 0.5
    # points (0, 0), (0, .5), (1/3, 1), ...: FPR - FNR goes -1, -.5, 1/3; 0 at 0.6 of the way: FPR 0.2
    assert equal_error_rate(np.array([0, 0, 1 / 3, 1]), np.array([0, 0.5, 1, 1]))[0] == pytest.approx(0.2)
    assert roc_scores([1, 1, 0], [0.9, 0.8, 0.1], resamples=0, seed=0)["eer"]["value"] == 0  # separated


def test_one_class_or_nothing_is_undefined_with_the_reason():
    one = roc_scores([1, 1, 1], [0.2, 0.5, 0.9], resamples=100, seed=0)
    assert one["auroc"]["value"] is None and one["eer"]["value"] is None and one["roc"] is None
    assert one["auroc"]["reason"] == "every scored instance is positive: AUROC needs both classes"
    assert roc_scores([], [], resamples=100, seed=0)["auroc"]["reason"] == "no instance has both a score and a label"
    json.dumps(one)


def test_the_bootstrap_redraws_instances_as_sklearn_would_score_them():
    labels, scores = tied_data(5, n=30)
    result = roc_scores(labels, scores, resamples=120, seed=9)

    drawn = generator(seed=9).integers(0, 30, size=(120, 30), dtype=np.uint32)
    aurocs = [roc_auc_score(labels[d], scores[d]) for d in drawn if 0 < labels[d].sum() < len(d)]
    eers = [eer_from_sklearn(labels[d], scores[d]) for d in drawn if 0 < labels[d].sum() < len(d)]
    assert result["auroc"]["ci95"] == pytest.approx(np.percentile(aurocs, [2.5, 97.5]))
    assert result["eer"]["ci95"] == pytest.approx(np.percentile(eers, [2.5, 97.5]))


def test_the_bootstrap_is_seeded_and_holds_the_estimate():
    labels, scores = tied_data(6, n=80)
    first = roc_scores(labels, scores, resamples=400, seed=2)
    assert first == roc_scores(labels, scores, resamples=400, seed=2)
    assert first["auroc"]["ci95"] != roc_scores(labels, scores, resamples=400, seed=3)["auroc"]["ci95"]
    for measure in ("auroc", "eer"):
        low, high = first[measure]["ci95"]
        assert low < first[measure]["value"] < high
    json.dumps(first)


def test_resamples_of_one_class_are_counted_and_left_out():
    result = roc_scores([1, 0, 0, 0, 0, 0], [0.9, 0.1, 0.2, 0.3, 0.4, 0.95], resamples=200, seed=0)
    assert result["auroc"]["resamples_undefined"] > 0  # a resample misses the one positive a third of the time
    assert result["auroc"]["ci95"] is not None


def test_too_few_instances_give_no_interval():
    result = roc_scores([1, 0, 1, 0], [0.9, 0.1, 0.6, 0.2], resamples=100, seed=0)
    assert result["auroc"]["value"] == 1.0 and result["auroc"]["ci95"] is None
    assert "too few instances" in result["auroc"]["ci95_undefined"]


def test_points_for_a_plot():
    points = roc_points([True, False, True], [0.3, 0.2, 0.3])
    assert points == {"fpr": [0.0, 0.0, 1.0], "tpr": [0.0, 1.0, 1.0], "thresholds": [None, 0.3, 0.2]}
