"""Future marks from the ordinal annotator model, for probabilistic stopping. Pure numpy and scipy.

The beta-binomial predictive of evaluation.stats.stopping sees a word as its count of marks. The
ordinal model of evaluation.stats.annotator_models sees more: the three levels (a word marked
heavily by most is surely emphasized; one marked lightly by a bare majority is not), and who gave
them (a listener who marks much says less by marking). Fitted to a study's annotations, it gives
each word a posterior over its latent prominence theta (on annotator_models.GRID), and the study's
listeners a mean chance q(theta) of marking a word of that prominence. A further listener is one
more of the same crowd, so given theta the marks of `more` listeners are Binomial(more, q(theta)),
and over the word's posterior a mixture of those:

    P(j further marks) = sum over theta of posterior(theta) * Binomial(j; more, q(theta)).

A word's posterior needs only the fitted state (the prominence distribution and each annotator's
three parameters) and the word's own annotations. bench/adaptive.py uses it, and so does a live
study whose predictor is the ordinal model (annotation.services.adaptive_model stores the state
and judges each clip at its submissions).

On the simulated MMEE-like study of bench/adaptive.py (honest listeners, epsilon 0.02) this
predictive stops 11.3 % of annotations against the beta-binomial's 10.3 %, with 0.02 % of binary
labels differing from the full design; an oracle that knew every word's true marking rate would
stop 14 %.
"""

from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from evaluation.stats.annotator_models import GRID, ordinal_confusion, ordinal_point_fit


@dataclass(frozen=True)
class OrdinalState:
    """A fitted ordinal model, as probabilistic stopping needs it."""

    prior: np.ndarray  # (G,) the words' prominence distribution on GRID
    parameters: np.ndarray  # (A, 3) per annotator index: t1, log(t2 - t1), log sigma
    mark_chance: np.ndarray  # (G,) a further listener's chance of marking: the fitted annotators' mean


def ordinal_state_fit(
    *, clip: np.ndarray, annotator: np.ndarray, levels: np.ndarray, n_annotators: int
) -> OrdinalState:
    """Fit the ordinal model to annotations (annotator_models.word_posteriors' arguments) and keep
    what the predictive needs. Raises ValueError where the model cannot be fitted."""
    fit = ordinal_point_fit(clip=clip, annotator=annotator, levels=levels, n_annotators=n_annotators)
    labelled = fit["labelled"]
    chance = 1.0 - ordinal_confusion(fit["parameters"][labelled])[:, :, 0]
    return OrdinalState(
        prior=fit["prior"],
        parameters=fit["parameters"],
        mark_chance=chance.mean(axis=0),
    )


def prominence_posterior(
    state: OrdinalState, *, row_word: np.ndarray, row_parameters: np.ndarray, row_level: np.ndarray, words: int
) -> np.ndarray:
    """(words, G) posterior of each word's prominence from its annotations: one row per (annotation,
    word) with the word's index (0..words - 1), its annotator's parameters (rows, 3) and the level."""
    row_word, row_level = np.asarray(row_word, dtype=np.int64), np.asarray(row_level, dtype=np.int64)
    log_confusion = np.log(ordinal_confusion(np.asarray(row_parameters, dtype=float).reshape(-1, 3)))
    per_row = log_confusion[np.arange(row_word.size), :, row_level]  # (rows, G)
    log_joint = np.log(state.prior)[None, :] + np.stack(
        [np.bincount(row_word, per_row[:, g], words) for g in range(GRID.size)], axis=1
    )
    log_joint -= log_joint.max(axis=1, keepdims=True)
    posterior = np.exp(log_joint)
    return posterior / posterior.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class OrdinalPredictive:
    """evaluation.stats.stopping.MarkPredictive from words' prominence posteriors (words x G), in
    the order of the marks passed to `future_marks` (which the posteriors already hold)."""

    posterior: np.ndarray
    mark_chance: np.ndarray

    def future_marks(self, marks: np.ndarray, seen: np.ndarray, more: int) -> np.ndarray:
        j = np.arange(more + 1)
        return self.posterior @ binom.pmf(j[None, :], more, self.mark_chance[:, None])
