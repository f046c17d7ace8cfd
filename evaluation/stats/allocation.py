"""Which clip of a word-level emphasis study the next listener should hear, and the labels its
annotations give, by the ordinal annotator model. Pure numpy and scipy.

evaluation.stats.stopping values one more listener by a beta posterior on each word's marking
rate, blind to who marked and how strongly. The ordinal model of evaluation.stats.annotator_models
sees both: a word has a latent prominence theta, listener j gives level 0, 1 or 2 by their own
two thresholds and noise. Here that model is read on a grid twenty times finer than the one it is
fitted on (annotator_models.GRID, steps of 0.5): the words that matter for allocation lie near the
crowd's threshold, and on the coarse grid a word's whole posterior near it is one or two points,
so the label moves in jumps of half a noise unit.

- A word is emphasized where the crowd's typical listener (each fitted annotator weighted by
  their discrimination, annotator_models.listener_weights, so that spammers and listeners who
  mark every word or none count for nothing) would mark it with
  chance above one half: the verdict of a crowd without end, not of N listeners (annotator_models'
  posterior asks what N listeners would do, which moves with N, and N is what allocation varies).
- A word's label error is min(P(emphasized), 1 - P(emphasized)) under its posterior, and r more
  listeners' expected error reduction is that error less its expectation over the levels r
  typical listeners would give (the fitted annotators' mean confusion). A clip's priority is the
  sum over its words, per listener, at the best r up to LOOKAHEAD: one listener alone is worth
  nothing on a word whose label no single level can turn, the words allocation is for.

A listener the model has not fitted yet (one who arrives between fits) counts as a typical one.

On bench/adaptive.py (3000 clips, the fixed design's budget of 10 a clip, seed 0; measured with
the 1 / sigma^2 weights of before issue 31, not yet rerun with the discrimination weights), greedy
allocation from 5 a clip by this priority, labelled by this model, has a word error against the
truth 14.2 % below the fixed design's majority with honest listeners, 21.7 % with 10 % spammers
(12.8 % below the majority of the same annotations) and 7.0 % with 20 % heavy-only listeners.
A live study in model allocation (Study.adaptive_mode "allocate") values its clips by it
(annotation.services.adaptive_model).
"""

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import gammaln, ndtr

from evaluation.stats.annotator_models import GRID, listener_weights, ordinal_point_fit

FINE_GRID = np.linspace(GRID[0], GRID[-1], 20 * (GRID.size - 1) + 1)
LOOKAHEAD = 4  # further listeners a clip's priority looks ahead to


@dataclass(frozen=True)
class ProminenceModel:
    """A fitted ordinal model on FINE_GRID, as allocation and labels need it."""

    log_prior: np.ndarray  # (G,) the words' prominence distribution
    log_confusion: np.ndarray  # (A + 1, G, 3) log P(level | prominence) per annotator; the last row a typical one
    emphasized: np.ndarray  # (G,) bool: the typical listener marks a word of that prominence with chance > 1/2
    fitted: np.ndarray  # (A,) bool: the annotators the fit had annotations of (the others' rows are the typical one)

    @property
    def typical(self) -> int:
        """The row of log_confusion that stands for a listener not fitted yet."""
        return self.log_confusion.shape[0] - 1


def prominence_model_fit(
    *, clip: np.ndarray, annotator: np.ndarray, levels: np.ndarray, n_annotators: int
) -> ProminenceModel:
    """Fit the ordinal model (annotator_models.ordinal_point_fit, same arguments; raises
    ValueError as it does) and read it on FINE_GRID."""
    fit = ordinal_point_fit(clip=clip, annotator=annotator, levels=levels, n_annotators=n_annotators)
    return prominence_model(parameters=fit["parameters"], prior=fit["prior"], labelled=fit["labelled"])


def prominence_model(*, parameters: np.ndarray, prior: np.ndarray, labelled: np.ndarray) -> ProminenceModel:
    """The ordinal model's fit (annotators' parameters, the prominence distribution on GRID, which
    annotators gave a level) read on FINE_GRID."""
    labelled = np.asarray(labelled, dtype=bool)
    confusion = fine_confusion(parameters)
    weight = listener_weights(np.asarray(parameters), np.asarray(prior), labelled)
    mean = (labelled[:, None, None] * confusion).sum(axis=0) / labelled.sum()
    confusion[~labelled] = mean
    typical_mark = weight @ (1.0 - confusion[:, :, 0]) / weight.sum()
    log_prior = np.interp(FINE_GRID, GRID, np.log(prior))
    log_prior -= np.log(np.exp(log_prior).sum())
    return ProminenceModel(
        log_prior=log_prior,
        log_confusion=np.log(np.concatenate([confusion, mean[None]], axis=0)),
        emphasized=typical_mark > 0.5,
        fitted=labelled.copy(),
    )


def listeners_model(model: ProminenceModel, parameters: np.ndarray) -> ProminenceModel:
    """`model` for a few listeners of its crowd (a clip's, parameters (k, 3)): their rows 0..k - 1,
    the crowd's typical listener last, the crowd's verdict of what is emphasized kept."""
    typical = model.log_confusion[model.typical]
    return ProminenceModel(
        log_prior=model.log_prior,
        log_confusion=np.concatenate([np.log(fine_confusion(parameters)), typical[None]], axis=0),
        emphasized=model.emphasized,
        fitted=np.ones(len(parameters), dtype=bool),
    )


def fine_confusion(parameters: np.ndarray) -> np.ndarray:
    """(A, 3) parameters (t1, log(t2 - t1), log sigma) to (A, G, 3) P(level | prominence) on FINE_GRID,
    as annotator_models.ordinal_confusion on its grid."""
    parameters = np.asarray(parameters, dtype=float).reshape(-1, 3)
    t1, sigma = parameters[:, :1], np.exp(parameters[:, 2:])
    t2 = t1 + np.exp(parameters[:, 1:2])
    below1 = ndtr((t1 - FINE_GRID[None, :]) / sigma)
    below2 = ndtr((t2 - FINE_GRID[None, :]) / sigma)
    return np.clip(np.stack([below1, below2 - below1, 1.0 - below2], axis=2), 1e-12, 1.0)


def word_log_likelihoods(
    model: ProminenceModel, *, row_word: np.ndarray, row_annotator: np.ndarray, row_level: np.ndarray, words: int
) -> np.ndarray:
    """(words, G) log-likelihood of each word's prominence from its annotations: one row per
    (annotation, word) with the word's index (0..words - 1), the annotator's row of the model
    (model.typical for one it has not fitted) and the level given."""
    row_word = np.asarray(row_word, dtype=np.int64)
    kinds = model.log_confusion.shape[0] * 3
    key = np.asarray(row_annotator, dtype=np.int64) * 3 + np.asarray(row_level, dtype=np.int64)
    # Words x (annotator, level) counts times each pair's log-likelihood: no (rows x G) array.
    counts = sparse.csr_matrix((np.ones(row_word.size), (row_word, key)), shape=(words, kinds))
    table = model.log_confusion.transpose(0, 2, 1).reshape(kinds, -1)
    return np.asarray(counts @ table)


def emphasis_probabilities(model: ProminenceModel, log_likelihood: np.ndarray) -> np.ndarray:
    """(words,) P(emphasized) from (words, G) log-likelihoods."""
    return posteriors(model, log_likelihood)[:, model.emphasized].sum(axis=1)


def posteriors(model: ProminenceModel, log_likelihood: np.ndarray) -> np.ndarray:
    joint = model.log_prior + np.atleast_2d(log_likelihood)
    joint = np.exp(joint - joint.max(axis=1, keepdims=True))
    return joint / joint.sum(axis=1, keepdims=True)


def expected_error_reductions(model: ProminenceModel, log_likelihood: np.ndarray, more: int = 1) -> np.ndarray:
    """(words,) the expected fall of each word's label error from `more` further, typical,
    listeners (never negative: the label error is concave in the posterior). Their levels are
    multinomial given the prominence, so the outcomes are the counts of each level."""
    posterior = posteriors(model, log_likelihood)
    inside = posterior * model.emphasized
    now = inside.sum(axis=1)
    outcomes = _outcome_chances(np.exp(model.log_confusion[model.typical]), more)  # (G, outcomes)
    joint_inside, joint_all = inside @ outcomes, posterior @ outcomes  # P(E, outcome), P(outcome)
    after = np.minimum(joint_inside, joint_all - joint_inside).sum(axis=1)
    return np.maximum(np.minimum(now, 1.0 - now) - after, 0.0)


def _outcome_chances(confusion: np.ndarray, more: int) -> np.ndarray:
    """(G, outcomes) P(n0, n1, n2 levels among `more` listeners | prominence), n0 + n1 + n2 = more."""
    counts = np.array([(n0, n1, more - n0 - n1) for n0 in range(more + 1) for n1 in range(more + 1 - n0)])
    log_ways = gammaln(more + 1) - gammaln(counts + 1).sum(axis=1)
    return np.exp(log_ways[None, :] + np.log(confusion) @ counts.T)


def model_clip_priority(model: ProminenceModel, log_likelihood: np.ndarray, lookahead: int = LOOKAHEAD) -> float:
    """What one more listener is worth on a clip, from its words' (words, G) log-likelihoods: the
    words' expected error reductions from r more listeners, summed, per listener, at the best r up
    to `lookahead`. With r = 1 alone, a contested word whose label no single listener can turn is
    worth nothing, though a few would settle it."""
    return max(float(expected_error_reductions(model, log_likelihood, r).sum()) / r for r in range(1, lookahead + 1))
