"""Stopping rules for word-level emphasis: exactness of the binary rule on random data, the flip
probability against brute force, the scalar standard error, the empirical-Bayes prior."""

import itertools

import numpy as np
import pytest
from scipy.stats import betabinom

from evaluation.stats.aggregation import binary_labels, level_counts
from evaluation.stats.stopping import (
    BetaBinomialPredictive,
    StoppingRule,
    beta_prior_fit,
    clip_priority,
    clip_settled,
    current_labels,
    decided,
    error_reductions,
    flip_probabilities,
    label_errors,
    rule_without,
    scalar_standard_errors,
)


def _stop_point(rule: StoppingRule, levels: np.ndarray) -> int:
    """How many of the clip's annotations (rows, in arrival order) the rule takes."""
    for seen in range(1, levels.shape[0] + 1):
        marks, heavy = (levels[:seen] >= 1).sum(axis=0), (levels[:seen] == 2).sum(axis=0)
        if clip_settled(rule, marks, heavy, seen):
            return seen
    return levels.shape[0]


@pytest.mark.parametrize("target", [3, 4, 7, 10, 11])
def test_exact_stopping_gives_the_full_designs_binary_labels_on_random_data(target):
    rng = np.random.default_rng(target)
    rule = StoppingRule(mode="exact", target=target)
    stopped_early = 0
    for _ in range(400):
        words = int(rng.integers(1, 16))
        rates = rng.beta(0.4, 1.2, size=words)  # mostly unmarked words, a few contested ones
        marked = rng.random((target, words)) < rates
        levels = marked * rng.integers(1, 3, size=(target, words))
        seen = _stop_point(rule, levels)
        stopped_early += seen < target
        full = binary_labels(level_counts(levels))
        assert np.array_equal(binary_labels(level_counts(levels[:seen])), full)
        assert np.all(decided((levels[:seen] >= 1).sum(axis=0), seen, target))
    assert stopped_early > 0  # the test would prove nothing if no clip ever stopped


def test_six_of_six_with_two_listeners_excluded_is_not_settled():
    # 6 of 6 marked stops a clip of target 10; 2 of those listeners excluded leave 4 of 4, and the
    # full design with the same exclusions may give 4 of 8 (four more listeners, none marking).
    rule = StoppingRule(mode="exact", target=10)
    assert clip_settled(rule, np.array([6]), np.array([0]), 6)
    assert not clip_settled(rule_without(rule, 2), np.array([4]), np.array([0]), 4)
    assert clip_settled(rule_without(rule, 2), np.array([5]), np.array([0]), 5)  # 5 of 8 is a majority


@pytest.mark.parametrize("target", [4, 7, 10])
def test_exact_stopping_with_late_exclusions_gives_the_full_designs_labels_under_them(target):
    """Listeners are excluded after their clip stopped: the clip is judged again on the kept
    annotations, listens on where that says so, and ends with the labels that the full design's
    kept annotations give."""
    rng = np.random.default_rng(100 + target)
    rule = StoppingRule(mode="exact", target=target)
    reopened = 0
    for _ in range(600):
        words = int(rng.integers(1, 8))
        marked = rng.random((target, words)) < rng.beta(0.6, 1.0, size=words)
        levels = marked * rng.integers(1, 3, size=(target, words))
        excluded = rng.random(target) < 0.25
        first_stop = _stop_point(rule, levels)  # nobody excluded yet
        seen = first_stop
        while seen < target and not _settled_without(rule, levels[:seen], excluded[:seen]):
            seen += 1
        reopened += seen > first_stop
        kept = levels[~excluded]
        if kept.shape[0] == 0:
            continue
        full = binary_labels(level_counts(kept))
        assert np.array_equal(binary_labels(level_counts(levels[:seen][~excluded[:seen]])), full)
    assert reopened > 0


def _settled_without(rule: StoppingRule, levels: np.ndarray, excluded: np.ndarray) -> bool:
    kept = levels[~excluded]
    marks, heavy = (kept >= 1).sum(axis=0), (kept == 2).sum(axis=0)
    return clip_settled(rule_without(rule, int(excluded.sum())), marks, heavy, kept.shape[0])


def test_decided_exhaustively_matches_every_completion():
    target = 6
    for seen in range(target + 1):
        for marks in range(seen + 1):
            finals = {2 * (marks + extra) > target for extra in range(target - seen + 1)}
            assert bool(decided(np.array([marks]), seen, target)[0]) == (len(finals) == 1)


def test_a_clip_with_an_undecided_word_keeps_listening():
    rule = StoppingRule(mode="exact", target=10)
    assert not clip_settled(rule, np.array([0, 4]), np.array([0, 0]), 6)  # 4 of 6: 6 of 10 still possible
    assert clip_settled(rule, np.array([0, 6]), np.array([0, 0]), 6)
    assert clip_settled(rule, np.array([0, 1]), np.array([0, 0]), 6)  # 1 + 4 = 5 is no majority


def test_the_scalar_bound_keeps_a_decided_clip_listening():
    marks, heavy = np.array([6, 0]), np.array([3, 0])  # scores 1, 1, 1, .5, .5, .5 and all zero
    assert clip_settled(StoppingRule(mode="exact", target=10), marks, heavy, 6)
    assert not clip_settled(StoppingRule(mode="exact", target=10, scalar_se=0.05), marks, heavy, 6)
    assert clip_settled(StoppingRule(mode="exact", target=10, scalar_se=0.2), marks, heavy, 6)


def test_scalar_standard_error_is_the_sample_sd_over_root_k():
    scores = np.array([1.0, 1.0, 0.5, 0.0, 0.5])
    marks, heavy = np.array([(scores > 0).sum()]), np.array([(scores == 1).sum()])
    expected = scores.std(ddof=1) / np.sqrt(scores.size)
    assert scalar_standard_errors(marks, heavy, scores.size)[0] == pytest.approx(expected)
    assert np.isinf(scalar_standard_errors(marks, heavy, 1)[0])


def test_flip_probability_equals_enumeration_of_future_marks():
    prior = BetaBinomialPredictive(0.7, 2.3)
    target, seen = 10, 4
    marks = np.arange(seen + 1)
    got = flip_probabilities(marks, seen, target, prior)
    for m, value in zip(marks, got, strict=True):
        current = 2 * m > seen
        expected = sum(
            betabinom.pmf(extra, target - seen, prior.a + m, prior.b + seen - m)
            for extra in range(target - seen + 1)
            if (2 * (m + extra) > target) != current
        )
        assert value == pytest.approx(expected)
    decided_words = decided(marks, seen, target)
    assert np.all(got[decided_words & (current_labels(marks, seen) == (2 * marks > target))] == 0)


def test_probabilistic_stopping_waits_for_the_minimum_and_the_epsilon():
    prior = BetaBinomialPredictive(0.3, 1.5)
    rule = StoppingRule(mode="probabilistic", target=10, epsilon=0.02, minimum=3)
    quiet = np.zeros(15, dtype=int)
    assert not clip_settled(rule, quiet, quiet, 2, prior)
    assert clip_settled(rule, quiet, quiet, 3, prior)
    contested = quiet.copy()
    contested[4] = 2  # 2 of 4
    assert not clip_settled(rule, contested, quiet, 4, prior)


def test_error_reductions_are_largest_on_contested_words():
    prior = BetaBinomialPredictive(0.5, 0.5)
    reductions = error_reductions(np.array([0, 5, 9]), 10, prior)
    assert reductions[1] > reductions[0] and reductions[1] > reductions[2]
    assert np.all(reductions >= 0)
    assert clip_priority(np.array([0, 5]), 10, prior) == pytest.approx(reductions[:2].sum())
    assert label_errors(np.array([5]), 10, prior)[0] == pytest.approx(0.5)


def test_prior_fit_recovers_the_beta_of_simulated_words():
    rng = np.random.default_rng(3)
    rates = rng.beta(0.4, 1.6, size=20_000)
    seen = np.full(rates.size, 10)
    marks = rng.binomial(seen, rates)
    fitted = beta_prior_fit(marks, seen)
    assert fitted.a == pytest.approx(0.4, rel=0.1)
    assert fitted.b == pytest.approx(1.6, rel=0.1)


def test_prior_fit_declines_with_too_few_words():
    assert beta_prior_fit(np.array([1, 2]), np.array([3, 3])) is None


def test_fixed_rule_listens_to_the_target():
    rule = StoppingRule(mode="fixed", target=3)
    zeros = np.zeros(4, dtype=int)
    assert [clip_settled(rule, zeros, zeros, seen) for seen in range(1, 5)] == [False, False, True, True]


def test_every_mode_settles_at_the_target():
    zeros = np.zeros(2, dtype=int)
    for mode, seen in itertools.product(("exact", "probabilistic", "reallocate"), (10, 11)):
        assert clip_settled(StoppingRule(mode=mode, target=10), zeros + 5, zeros, seen)


def test_model_predictive_is_the_posterior_mixture_of_two_binomials():
    from scipy.stats import binom

    from evaluation.stats.stopping import model_predictive

    posterior, marks, seen = np.array([0.9, 0.1]), np.array([4, 0]), np.array([5, 5])
    predictive = model_predictive(posterior, marks, seen)
    assert predictive.mark_if_emphasized == pytest.approx((0.9 * 4) / (0.9 * 5 + 0.1 * 5))
    assert predictive.mark_if_not == pytest.approx((0.1 * 4) / (0.1 * 5 + 0.9 * 5))
    pmf = predictive.future_marks(marks, seen, 3)
    expected = 0.9 * binom.pmf(np.arange(4), 3, predictive.mark_if_emphasized) + 0.1 * binom.pmf(
        np.arange(4), 3, predictive.mark_if_not
    )
    assert pmf[0] == pytest.approx(expected) and pmf.sum(axis=1) == pytest.approx([1, 1])
    flips = flip_probabilities(marks, 5, 10, predictive)
    assert flips.shape == (2,) and np.all((flips >= 0) & (flips <= 1))
