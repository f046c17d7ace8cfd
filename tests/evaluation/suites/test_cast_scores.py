"""CAST Hit, Pair-Contrast and Pair-Correct by hand; detector-vs-listener kappa against sklearn. No database."""

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evaluation.stats.resampling import generator
from evaluation.stats.suites.cast import CastPair, detector_human_kappa, pair_scores, word_labels

A, B = 1, 3  # word A ("never") and word B ("she") of "I never said she stole it"
PAIRS = [
    CastPair("p1", A, B, frozenset({1}), frozenset({3})),  # hit A, hit B, contrast both: correct
    CastPair("p2", A, B, frozenset({1, 3}), frozenset({3})),  # hit A, hit B; B also stressed on side A
    CastPair("p3", A, B, frozenset({0}), frozenset({1})),  # nothing right
    CastPair("p4", A, B, frozenset({1}), frozenset({1})),  # side A right; side B stresses A
    CastPair("p5", A, B, frozenset({1}), frozenset({3, 4})),  # correct (word 4 is neither A nor B)
    CastPair("p6", A, B, None, frozenset({3})),  # side A missing: listed, not scored
    CastPair("p7", A, B, frozenset(), frozenset()),  # both renditions there, nothing stressed
]
# per scored pair: hit_a, hit_b, contrast_a, contrast_b, correct
BY_HAND = {
    "p1": (1, 1, 1, 1, 1),
    "p2": (1, 1, 0, 1, 0),
    "p3": (0, 0, 0, 0, 0),
    "p4": (1, 0, 1, 0, 0),
    "p5": (1, 1, 1, 1, 1),
    "p7": (0, 0, 0, 0, 0),
}


def test_measures_by_hand():
    scores = pair_scores(PAIRS, resamples=200, seed=4)

    assert (scores["pairs"], scores["scored"]) == (7, 6)
    assert scores["missing"] == [{"item": "p6", "sides": ["A"]}]
    rows = {row["item"]: row for row in scores["per_pair"]}
    assert {
        item: (r["hit_a"], r["hit_b"], r["contrast_a"], r["contrast_b"], r["correct"]) for item, r in rows.items()
    } == BY_HAND
    assert (scores["hit"]["successes"], scores["hit"]["trials"], scores["hit"]["value"]) == (4, 6, 4 / 6)
    assert (scores["hit_both"]["successes"], scores["hit_both"]["trials"]) == (7, 12)
    assert (scores["pair_contrast"]["successes"], scores["pair_contrast"]["trials"]) == (3, 6)
    assert (scores["pair_correct"]["successes"], scores["pair_correct"]["trials"]) == (2, 6)
    json.dumps(scores)


def test_a_pair_missing_both_sides_is_listed_with_both():
    scores = pair_scores([CastPair("c", A, B, None, None)], resamples=10, seed=0)
    assert scores["missing"] == [{"item": "c", "sides": ["A", "B"]}] and scores["scored"] == 0
    assert scores["hit"]["value"] is None and scores["hit"]["ci95_undefined"] == "no pair has both sides"


def test_the_bootstrap_resamples_pairs_with_the_seed():
    scores = pair_scores(PAIRS, resamples=300, seed=11)
    hit_a = np.array([BY_HAND[item][0] for item in sorted(BY_HAND, key=lambda i: int(i[1:]))], dtype=float)
    correct = np.array([BY_HAND[item][4] for item in sorted(BY_HAND, key=lambda i: int(i[1:]))], dtype=float)
    drawn = generator(seed=11).integers(0, 6, size=(300, 6), dtype=np.uint32)
    assert scores["hit"]["ci95"] == pytest.approx(np.percentile(hit_a[drawn].mean(axis=1), [2.5, 97.5]))
    assert scores["pair_correct"]["ci95"] == pytest.approx(np.percentile(correct[drawn].mean(axis=1), [2.5, 97.5]))


def test_intervals_are_seeded_and_hold_the_estimate():
    rng = np.random.default_rng(0)
    pairs = [
        CastPair(
            f"c{n}",
            0,
            1,
            frozenset(np.flatnonzero(rng.random(3) < 0.6).tolist()),
            frozenset(np.flatnonzero(rng.random(3) < 0.6).tolist()),
        )
        for n in range(40)
    ]
    first, again = pair_scores(pairs, resamples=500, seed=3), pair_scores(pairs, resamples=500, seed=3)
    other = pair_scores(pairs, resamples=500, seed=4)
    for measure in ("hit", "hit_both", "pair_contrast", "pair_correct"):
        low, high = first[measure]["ci95"]
        assert first[measure]["ci95"] == again[measure]["ci95"]
        assert low < first[measure]["value"] < high
    assert first["hit"]["ci95"] != other["hit"]["ci95"]


def test_too_few_pairs_or_no_resamples_give_no_interval():
    few = pair_scores(PAIRS[:3], resamples=100, seed=0)
    assert few["hit"]["ci95"] is None and "too few pairs" in few["hit"]["ci95_undefined"]
    none = pair_scores(PAIRS, resamples=0, seed=0)
    assert none["hit"]["ci95"] is None and none["hit"]["ci95_undefined"] == "no resamples asked for"
    assert none["hit"]["value"] == 4 / 6


DETECTOR = {
    "r1": word_labels({1, 3}, 4),
    "r2": word_labels({0}, 4),
    "r3": word_labels({2}, 4),
    "r4": word_labels({1}, 3),
    "r5": word_labels({0, 2}, 3),
    "r6": word_labels({1}, 3),
    "detector-only": word_labels({0}, 2),
}
HUMAN = {
    "r1": [0, 1, 0, 1],
    "r2": [1, 0, 0, 1],
    "r3": [0, 1, 0, 0],
    "r4": [0, 1, 0],
    "r5": [0, 0, 1],
    "r6": [0, 1, None],
    "human-only": [1, 0],
}


def test_detector_human_kappa_against_sklearn():
    result = detector_human_kappa(DETECTOR, HUMAN, resamples=200, seed=1)

    shared = ["r1", "r2", "r3", "r4", "r5", "r6"]
    pairs = [(d, h) for r in shared for d, h in zip(DETECTOR[r], HUMAN[r]) if h is not None]
    detector, human = zip(*pairs)
    assert result["kappa"] == pytest.approx(cohen_kappa_score(detector, human))
    assert (result["renditions"], result["words"]) == (6, 20)  # r6's third word has no listeners' label
    assert (result["detector_only"], result["human_only"]) == (1, 1)
    # rows the detector's label, columns the listeners'
    assert result["table"] == [
        [sum(d == 0 and h == 0 for d, h in pairs), sum(d == 0 and h == 1 for d, h in pairs)],
        [sum(d == 1 and h == 0 for d, h in pairs), sum(d == 1 and h == 1 for d, h in pairs)],
    ]
    assert result["table"] == [[10, 2], [2, 6]]
    # by hand: observed agreement 16/20, chance (12 * 12 + 8 * 8) / 20^2 = 0.52
    assert result["kappa"] == pytest.approx((0.8 - 0.52) / (1 - 0.52))
    assert result["ci95"] is not None and result["bootstrap_ci95"] is not None
    assert result == detector_human_kappa(DETECTOR, HUMAN, resamples=200, seed=1)
    json.dumps(result)


def test_detector_human_kappa_undefined_and_mismatched():
    silent = {"r1": [0, 0, 0]}
    result = detector_human_kappa(silent, {"r1": [0, 0, 0]}, resamples=10, seed=0)
    assert result["kappa"] is None and "0/0" in result["reason"] and result["ci95_undefined"]
    assert detector_human_kappa({}, {"r1": [1]}, resamples=10, seed=0)["reason"] == "no unit rated by both raters"
    with pytest.raises(ValueError, match="r1"):
        detector_human_kappa({"r1": [0, 1]}, {"r1": [0, 1, 0]})
