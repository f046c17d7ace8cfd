"""When a clip of a word-level emphasis study has heard enough listeners, and which clip needs the next one.
Pure numpy and scipy.

The published binary rule: with a target of N annotations, a word is emphasized when more than N/2
of them mark it (level 1 or 2). With k annotations so far and m marks on a word:

- Exact stopping. The word's label is decided when m > N/2 (emphasized whatever comes) or
  m + (N - k) <= N/2 (it can no longer reach the majority). A clip whose every word is decided
  stops: its binary labels are exactly those the full design would give (tests prove it on random
  data). Its scalar labels are not: the scalar label of a stopped clip is the mean over its k < N
  annotations, an unbiased estimate of the full design's mean with a larger standard error. With
  `scalar_se`, a clip stops only when, besides, every word's scalar label has a standard error
  (sample standard deviation of its scores / sqrt(k)) at most that bound.
- Probabilistic stopping. A predictive distribution of the marks the remaining N - k listeners
  would give (`MarkPredictive`) yields, per word, the probability that the full design's label
  would differ from the current estimate (the majority of the k annotations so far, what a label
  set built now gives); the clip stops when that flip probability is below epsilon for every word,
  once it has at least `minimum` annotations. The default predictive distribution is beta-binomial
  with a prior fitted to the study's own mark counts (empirical Bayes, `beta_prior_fit`); any other
  model that gives per word the distribution of future marks (an annotator model's posterior) fits
  the same interface.
- Reallocation. Each clip's value for one more listener is the expected reduction, summed over its
  words, of the probability that the word's label is wrong about the crowd's verdict (the share of
  listeners who would mark it is above or below one half), under the same beta posterior.

Scores, as in evaluation.stats.aggregation: levels 0, 1, 2 score 0, 0.5, 1.
"""

from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
from scipy import optimize, special
from scipy.stats import betabinom, binom

JEFFREYS = (0.5, 0.5)  # the prior until a study has enough words to fit its own
MIN_WORDS_TO_FIT = 50


@dataclass(frozen=True)
class StoppingRule:
    """A study's rule. mode: "fixed", "exact", "probabilistic" or "reallocate"."""

    mode: str
    target: int
    epsilon: float = 0.02
    minimum: int = 3
    maximum: int = 20
    scalar_se: float | None = None


class MarkPredictive(Protocol):
    """Per word, the distribution of the marks `more` further listeners would give."""

    def future_marks(self, marks: np.ndarray, seen: np.ndarray, more: int) -> np.ndarray:
        """(words x more + 1) probabilities of 0..more further marks, from `marks` of `seen` so far."""


@dataclass(frozen=True)
class BetaBinomialPredictive:
    """Beta(a, b) prior on a word's marking rate; the marks of further listeners are beta-binomial."""

    a: float = JEFFREYS[0]
    b: float = JEFFREYS[1]

    def future_marks(self, marks: np.ndarray, seen: np.ndarray, more: int) -> np.ndarray:
        marks, seen = np.asarray(marks, dtype=float), np.asarray(seen, dtype=float)
        j = np.arange(more + 1)
        return betabinom.pmf(j[None, :], more, self.a + marks[:, None], self.b + (seen - marks)[:, None])


def decided(marks: np.ndarray, seen: int | np.ndarray, target: int) -> np.ndarray:
    """Per word: is its binary label under `target` annotations settled by `marks` of `seen` already?
    `seen` may be an array that broadcasts against `marks` (the designer's every k at once)."""
    marks = np.asarray(marks)
    return (2 * marks > target) | (2 * (marks + target - seen) <= target)


def current_labels(marks: np.ndarray, seen: int) -> np.ndarray:
    """The binary labels of the annotations so far: more than half marked the word."""
    return 2 * np.asarray(marks) > seen


def flip_probabilities(marks: np.ndarray, seen: int, target: int, predictive: MarkPredictive) -> np.ndarray:
    """Per word: the probability that `target` annotations would label it otherwise than the `seen` so far."""
    marks = np.asarray(marks)
    more = target - seen
    if more <= 0:
        return np.zeros(marks.shape, dtype=float)
    pmf = predictive.future_marks(marks, np.full(marks.shape, seen), more)
    final_marked = 2 * (marks[:, None] + np.arange(more + 1)[None, :]) > target
    flips = final_marked != current_labels(marks, seen)[:, None]
    return (pmf * flips).sum(axis=1)


def scalar_standard_errors(marks: np.ndarray, heavy: np.ndarray, seen: int) -> np.ndarray:
    """Per word: standard error of the mean score (sample sd / sqrt(k)); inf below two annotations.
    `marks` counts levels 1 and 2, `heavy` level 2: scores 0.5 and 1 sum to (marks + heavy) / 2."""
    if seen < 2:
        return np.full(np.shape(marks), np.inf)
    marks, heavy = np.asarray(marks, dtype=float), np.asarray(heavy, dtype=float)
    total = (marks + heavy) / 2
    squares = (marks - heavy) * 0.25 + heavy
    variance = np.maximum(squares - total**2 / seen, 0.0) / (seen - 1)
    return np.sqrt(variance / seen)


def clip_settled(
    rule: StoppingRule, marks: np.ndarray, heavy: np.ndarray, seen: int, predictive: MarkPredictive | None = None
) -> bool:
    """Does this clip need no more listeners under `rule` (below its target; see `needs_more` past it)?"""
    if rule.mode == "fixed":
        return seen >= rule.target
    if seen >= rule.target:
        return True
    if rule.scalar_se is not None and np.any(scalar_standard_errors(marks, heavy, seen) > rule.scalar_se):
        return False
    if rule.mode == "exact":
        return bool(np.all(decided(marks, seen, rule.target)))
    if seen < rule.minimum:
        return False
    flips = flip_probabilities(marks, seen, rule.target, predictive or BetaBinomialPredictive())
    return bool(np.all(flips < rule.epsilon))


def rule_without(rule: StoppingRule, excluded: int) -> StoppingRule:
    """The rule that judges a clip on the annotations a study keeps, once `excluded` of them are
    left out (their listeners rejected, flagged or failing checks). The full design with the same
    exclusions hears `target` listeners and keeps `target - excluded` of them, so the kept marks are
    judged against that smaller target: `clip_settled(rule_without(rule, e), kept marks, kept heavy,
    seen - e)`. A clip that stopped with 6 of 6 marks, 2 of those listeners then excluded, holds
    4 of 4 against a target of 8: not decided, since 4 more unmarked listeners give 4 of 8. Exact
    stopping stays exact against that design; a `minimum` counts kept annotations."""
    if excluded < 0:
        raise ValueError(f"excluded annotations cannot be negative (got {excluded})")
    return replace(rule, target=rule.target - excluded)


def label_errors(marks: np.ndarray, seen: np.ndarray | int, prior: BetaBinomialPredictive) -> np.ndarray:
    """Per word: posterior probability that the crowd's verdict (marking rate above one half) is not the
    likelier one, i.e. that the best label from these annotations is wrong."""
    marks = np.asarray(marks, dtype=float)
    above = 1.0 - special.betainc(prior.a + marks, prior.b + (seen - marks), 0.5)
    return np.minimum(above, 1.0 - above)


def error_reductions(marks: np.ndarray, seen: int, prior: BetaBinomialPredictive) -> np.ndarray:
    """Per word: expected fall of `label_errors` from one more listener (never negative: the label
    error is a concave function of the posterior)."""
    marks = np.asarray(marks, dtype=float)
    mark_next = (prior.a + marks) / (prior.a + prior.b + seen)
    after = mark_next * label_errors(marks + 1, seen + 1, prior) + (1 - mark_next) * label_errors(
        marks, seen + 1, prior
    )
    return np.maximum(label_errors(marks, seen, prior) - after, 0.0)


def clip_priority(marks: np.ndarray, seen: int, prior: BetaBinomialPredictive) -> float:
    """What one more listener is worth on this clip: the words' expected error reductions, summed."""
    return float(error_reductions(marks, seen, prior).sum())


def beta_prior_fit(marks: np.ndarray, seen: np.ndarray) -> BetaBinomialPredictive | None:
    """Empirical Bayes: the Beta(a, b) of words' marking rates that makes the observed mark counts
    likeliest (beta-binomial marginal likelihood), over words with two or more annotations. None
    while fewer than MIN_WORDS_TO_FIT words have them (too little to fit: keep the prior in use)."""
    marks, seen = np.asarray(marks, dtype=np.int64).ravel(), np.asarray(seen, dtype=np.int64).ravel()
    keep = seen >= 2
    if keep.sum() < MIN_WORDS_TO_FIT:
        return None
    pairs, weights = np.unique(np.stack([marks[keep], seen[keep]], axis=1), axis=0, return_counts=True)

    def negative_log_likelihood(log_ab):
        a, b = np.exp(log_ab)
        return -(weights * betabinom.logpmf(pairs[:, 0], pairs[:, 1], a, b)).sum()

    fitted = optimize.minimize(negative_log_likelihood, x0=np.log(JEFFREYS), method="Nelder-Mead")
    a, b = np.clip(np.exp(fitted.x), 1e-3, 1e3)
    return BetaBinomialPredictive(float(a), float(b))


@dataclass(frozen=True)
class ModelPredictive:
    """Future marks from an annotator model's word posteriors (evaluation.stats.annotator_models):
    a word is emphasized with probability `posterior`; a new listener marks an emphasized word with
    probability `mark_if_emphasized`, another with `mark_if_not`. Words in the order of the marks
    passed to `future_marks`, which the posterior already holds."""

    posterior: np.ndarray
    mark_if_emphasized: float
    mark_if_not: float

    def future_marks(self, marks: np.ndarray, seen: np.ndarray, more: int) -> np.ndarray:
        j = np.arange(more + 1)[None, :]
        posterior = np.asarray(self.posterior, dtype=float)[:, None]
        return posterior * binom.pmf(j, more, self.mark_if_emphasized) + (1 - posterior) * binom.pmf(
            j, more, self.mark_if_not
        )


def model_predictive(posterior: np.ndarray, marks: np.ndarray, seen: np.ndarray) -> ModelPredictive:
    """ModelPredictive with the crowd's marking rates given the truth estimated from the same words:
    the posterior-weighted share of marks among emphasized and among other words."""
    posterior, marks, seen = (np.asarray(a, dtype=float).ravel() for a in (posterior, marks, seen))
    emphasized = (posterior * marks).sum() / max((posterior * seen).sum(), 1e-12)
    other = ((1 - posterior) * marks).sum() / max(((1 - posterior) * seen).sum(), 1e-12)
    return ModelPredictive(posterior, float(emphasized), float(other))
