"""Annotator models: each word's probability of being truly emphasized, and each annotator's
reliability with its standard error, estimated from a study's own annotations. Pure numpy, scipy
and pandas; no Django.

The task of the models is the word, (clip, index); the annotations are clips x words x
annotators at three levels (0, 1, 2). Two models:

- "dawid-skene": the binary collapse (level >= 1 is a mark) fitted by crowd-kit's
  DawidSkene. Dawid and Skene (1979) give every annotator a full confusion matrix, here their
  sensitivity (marks a word that is emphasized) and specificity (leaves one that is not). That
  is the error our listeners make: their thresholds differ, so some miss weak emphasis and
  others mark too much, which a single accuracy (GLAD's ability, MACE's competence) cannot say;
  a spammer is a matrix whose two columns are equal. GLAD's item difficulty would help little
  with 10 to 15 listeners a word and costs a fit ten times slower; MACE assumes spammers mark
  by a fixed distribution, which the confusion matrix contains as a special case.
- "ordinal" (the default model; bench/annotator_models.py compares its labels with the majority's
  on the project's simulation and on the validation harness): the three levels, by a latent-trait model written here (crowd-kit has no ordinal
  model, nor has any well-kept library we know of). Each word has a latent prominence theta
  (on a grid, its distribution estimated); annotator j hears u = theta + sigma_j e (e standard
  normal) and answers the number of their two thresholds t_j1 < t_j2 below u, so
  P(level <= k | theta) = Phi((t_j,k+1 - theta) / sigma_j): a Dawid-Skene model whose confusion
  is constrained by a latent threshold model, three parameters an annotator, the order of the
  levels kept. A listener who marks only heavy emphasis is a high t_j1, a spammer a large
  sigma_j. A word is truly emphasized where the published rule would call it so on average with
  the study's N listeners a clip, whoever they were: where more than N/2 of N listeners of the
  typical chance of marking it mark it with probability at least 1/2; P(truly emphasized) is the
  posterior mass of those prominences, and level 2 starts at the same weights' median t_j2. The
  typical listener weighs each annotator by their discrimination (`listener_weights`): until
  issue 31 it was their precision 1 / sigma_j^2, and a listener who marks every word, none, or
  only a clip's first content word fits as a sharp threshold with a tiny sigma and took it over.
  Fitted by EM (evaluation.stats.ordinal_em; M step: Newton's
  method on every annotator's three parameters at once, with a weak normal prior that keeps an
  annotator with few words finite and fixes the latent scale), accelerated by SQUAREM. Why not Dawid-Skene's free classes: in
  MMEE-like data, words within a class differ in prominence, so listeners' marks on a word are
  correlated, which Dawid-Skene reads as independent evidence: on the simulation it labels
  far more words emphasized than the listeners' majority (23 % against 15 %, with 13 % truly
  emphasized). A continuous prominence takes that correlation in. Tests check its binary
  collapse against crowd-kit's Dawid-Skene on the collapsed marks.

Which labels to use. Neither model wins on every crowd: on crowds built independently of them
(evaluation.stats.crowds; bench/annotator_models.py prints the harness) a coordinated bloc of lazy
listeners, who all mark the first content word of a clip, can become the ordinal model's latent
prominence in a small study, and Dawid-Skene reads correlated honest marks as independent
evidence. So every fit carries its `standing` against the majority on the study's own
annotations (HeldOutStanding: which labels predict a held-out listener's marks better), and its
labels are recommended over the majority's only where they do so beyond the clips' noise;
otherwise the majority stays the labels (`recommended_labels`).

Reliability, on one scale for both models: Youden's J of the annotator's binary marks,
P(mark | truly emphasized) - P(mark | not emphasized): 1 for a perfect annotator, 0 for one
whose marks say nothing (a spammer). Its standard error is a bootstrap over clips: the clips are
resampled with replacement (a clip drawn twice is two tasks), the model refitted, and the SE is
the standard deviation of the annotator's J over the resamples where they have annotations; NaN
where they have fewer than two. A resample the model cannot fit (in a small or sparse study, one
whose clips hold no mark at all) is a missing replicate: the SE comes from the others, and
`se_method` says how many were used. The bootstrap takes the clips' dependence into account (an
annotator's words on one clip share its audio), which the observed information of the words
would not.
"""

import os
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from importlib.metadata import version

import numpy as np
from scipy import sparse
from scipy.stats import binom

from evaluation.stats import ordinal_em
from evaluation.stats.blas import one_blas_thread
from evaluation.stats.held_out_standing import HeldOutStanding, held_out_standing
from evaluation.stats.ordinal_em import GRID, Patterns, ordinal_confusion, thresholds

# what the models' users import from here
__all__ = ["GRID", "HeldOutStanding", "ordinal_confusion"]

MODELS = ("dawid-skene", "ordinal")
DEFAULT_RESAMPLES = 20
SE_METHOD = "bootstrap over clips"


class _Unfittable(ValueError):
    """Annotations the model cannot fit: the whole study's is refused, a resample's is skipped."""


@dataclass(frozen=True)
class AnnotatorModelFit:
    """What `word_posteriors` returns. Words are in the order of (clip, index); annotators by index."""

    model: str  # one of MODELS
    description: str  # the model and the library that fitted it, with its version
    fitted_at: str  # ISO 8601, UTC
    fit_seconds: float  # the fit and its bootstrap, wall clock
    resamples: int  # asked for; se_method says how many could be fitted
    se_method: str
    word_clip: np.ndarray  # (W,) clip index of each word
    word_index: np.ndarray  # (W,) index of the word in its clip
    posterior: np.ndarray  # (W,) P(truly emphasized)
    reliability: np.ndarray  # (A,) Youden's J; NaN for an annotator with no annotations
    reliability_se: np.ndarray  # (A,) bootstrap SE; NaN with fewer than two resamples holding the annotator
    words_labelled: np.ndarray  # (A,) words each annotator gave a level to
    level_posterior: np.ndarray | None = None  # (W, 3) P(true level), the ordinal model only
    majority: np.ndarray | None = None  # (W,) the published rule's labels on the same annotations
    standing: "HeldOutStanding | None" = None  # the model's labels against the majority's, held out
    _rows: dict = field(default_factory=dict, repr=False, compare=False)

    def clip_posterior(self, clip: int) -> np.ndarray:
        """P(truly emphasized) of each word of one clip, by word index (empty for a clip with no words)."""
        if not self._rows:
            starts = np.flatnonzero(np.r_[True, self.word_clip[1:] != self.word_clip[:-1]])
            ends = [*starts[1:], self.word_clip.size]
            self._rows.update({int(self.word_clip[s]): (s, e) for s, e in zip(starts, ends, strict=True)})
        begin, end = self._rows.get(int(clip), (0, 0))
        return self.posterior[begin:end]

    def labels(self) -> np.ndarray:
        """The model's binary labels: emphasized when the posterior is above 1/2."""
        return self.posterior > 0.5

    def recommended(self) -> bool:
        """Whether the model's labels are recommended over the majority's on this study: only where
        they predict a held-out listener's marks better beyond the clips' noise (`standing`)."""
        return self.standing is not None and self.standing.model_better

    def recommended_labels(self) -> np.ndarray:
        """The labels to use: the model's where `recommended`, else the majority's."""
        return self.labels() if self.recommended() or self.majority is None else self.majority

    def annotators(self) -> list[dict]:
        """Per annotator index: reliability, its SE and the words labelled (None for NaN)."""
        return [
            {"reliability": _number(r), "reliability_se": _number(se), "words": int(n)}
            for r, se, n in zip(self.reliability, self.reliability_se, self.words_labelled, strict=True)
        ]


def word_posteriors(
    *,
    clip: np.ndarray,
    annotator: np.ndarray,
    levels: np.ndarray,
    n_annotators: int | None = None,
    model: str = "ordinal",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> AnnotatorModelFit:
    """Fit `model` to annotations and return every word's P(truly emphasized) and every
    annotator's reliability (Youden's J) with its bootstrap SE.

    clip, annotator: (n,) indices of each annotation (StudyData's arrays; any order);
    levels: (n, width) 0, 1, 2 per word, -1 past the clip's last word (or a word not labelled);
    n_annotators: the length of the per-annotator arrays (default: the largest index + 1);
    resamples: bootstrap resamples over clips for the SE (0: no SE, all NaN); seed: theirs. A
    resample the model cannot fit is skipped (se_method says how many were used).
    Raises ValueError naming the problem for an unknown model or annotations it cannot fit
    (none, or no word marked / every word marked).
    """
    if model not in MODELS:
        raise ValueError(f"unknown annotator model {model!r}; choose one of {', '.join(MODELS)}")
    if resamples < 0:
        raise ValueError("resamples cannot be negative")
    started = time.perf_counter()
    table = _Table.build(clip, annotator, levels, n_annotators)
    marks = table.row_level >= 1
    if marks.min() == marks.max():
        raise _Unfittable("an annotator model needs both marked and unmarked words; every word has the same mark")
    with one_blas_thread():
        threads = _refit_threads(resamples) if model in _REFITS_IN_THREADS else 1
        point, replicates = _fit_with_replicates(_FITS[model], table, resamples, seed, threads)
    se = _bootstrap_se(replicates, table.n_annotators)
    return AnnotatorModelFit(
        model=model,
        description=_description(model),
        fitted_at=datetime.now(UTC).isoformat(timespec="seconds"),
        fit_seconds=time.perf_counter() - started,
        resamples=resamples,
        se_method=_se_method(resamples, len(replicates)),
        word_clip=table.word_clip,
        word_index=table.word_index,
        posterior=point["posterior"],
        reliability=point["reliability"],
        reliability_se=se,
        words_labelled=np.bincount(table.row_annotator, minlength=table.n_annotators),
        level_posterior=point.get("levels"),
        majority=_majority(table),
        standing=held_out_standing(table, point),
    )


def _fit_with_replicates(
    fit, table: "_Table", resamples: int, seed: int, threads: int
) -> tuple[dict, list[np.ndarray]]:
    """The point fit and the reliabilities of its bootstrap refits over clips (each warm-started
    from the point fit; `fit` is given the clips drawn; `threads` refits at once). Called with one
    BLAS thread: the products here are of skinny matrices and of a few hundred 3 x 3 ones, where
    BLAS threads only wait on each other (profiled on a busy two-core machine: scipy's L-BFGS-B, the M step before Newton's,
    spent 116 of the 147 s that 100 annotations took in its own step, against 26 s in all on one
    thread)."""
    point = fit(table, None, None)
    rng = np.random.default_rng(seed)
    clips = np.unique(table.word_clip)
    draws = [rng.choice(clips, size=clips.size, replace=True) for _ in range(resamples)]

    def refit(drawn: np.ndarray) -> np.ndarray | None:
        try:
            return fit(table, point, drawn)["reliability"]
        except _Unfittable:
            return None  # a missing replicate: the SE is taken over the others

    with ThreadPoolExecutor(max_workers=threads) as pool:
        refitted = list(pool.map(refit, draws))
    return point, [reliability for reliability in refitted if reliability is not None]


# The ordinal model's refits are independent, and numpy, scipy's sparse products and its special
# functions let go of the GIL in their loops: threads run them side by side, on the cores the
# process may use. Not Dawid-Skene's: crowd-kit works in pandas, which holds the GIL, and its fit
# silences pandas' warnings with warnings.catch_warnings, which threads would undo for each other.
_REFITS_IN_THREADS = {"ordinal"}
_REFIT_THREADS = 4  # at most: every thread holds a refit's arrays at once


def _refit_threads(resamples: int) -> int:
    return max(1, min(_REFIT_THREADS, resamples, len(os.sched_getaffinity(0))))


def ordinal_point_fit(*, clip: np.ndarray, annotator: np.ndarray, levels: np.ndarray, n_annotators: int) -> dict:
    """The ordinal model's point fit alone (no bootstrap), for probabilistic stopping
    (evaluation.stats.ordinal_predictive): the annotators' parameters (A, 3: t1, log of the gap
    to t2, log sigma), the prominence distribution on GRID, and which annotators gave a level.
    Arguments as for `word_posteriors`; raises ValueError as it does."""
    table = _Table.build(clip, annotator, levels, n_annotators)
    marks = table.row_level >= 1
    if marks.min() == marks.max():
        raise _Unfittable("an annotator model needs both marked and unmarked words; every word has the same mark")
    with one_blas_thread():  # see _fit_with_replicates
        point = _fit_ordinal(table, None, None)
    labelled = np.bincount(table.row_annotator, minlength=table.n_annotators) > 0
    return {"parameters": point["parameters"], "prior": point["prior"], "labelled": labelled}


def _majority(table: "_Table") -> np.ndarray:
    marks = np.bincount(table.row_word, weights=table.row_level >= 1, minlength=table.word_clip.size)
    return 2 * marks > np.bincount(table.row_word, minlength=table.word_clip.size)


def majority_labels(*, clip: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The published rule on the same annotations, for comparison: (word clip, word index,
    emphasized when more than half of the word's annotators marked it), words in (clip, index) order."""
    table = _Table.build(clip, np.zeros(np.asarray(clip).size, dtype=np.int64), levels, 1)
    marks = np.bincount(table.row_word, weights=table.row_level >= 1, minlength=table.word_clip.size)
    total = np.bincount(table.row_word, minlength=table.word_clip.size)
    return table.word_clip, table.word_index, 2 * marks > total


@dataclass(frozen=True)
class _Table:
    """Annotations as one row per (annotation, word) with a level."""

    word_clip: np.ndarray
    word_index: np.ndarray
    row_word: np.ndarray
    row_annotator: np.ndarray
    row_level: np.ndarray
    n_annotators: int

    @classmethod
    def build(cls, clip, annotator, levels, n_annotators) -> "_Table":
        clip = np.asarray(clip, dtype=np.int64)
        annotator = np.asarray(annotator, dtype=np.int64)
        levels = np.asarray(levels)
        if levels.ndim != 2 or levels.shape[0] != clip.size or annotator.shape != clip.shape:
            raise ValueError("levels must be (annotations x words), with one clip and annotator per annotation")
        if np.any((levels < -1) | (levels > 2)):
            raise ValueError("levels must be 0, 1 or 2 (-1 for no level)")
        row, word = np.nonzero(levels >= 0)
        if row.size == 0:
            raise ValueError("an annotator model needs annotations; there are none")
        n_annotators = int(annotator.max()) + 1 if n_annotators is None else int(n_annotators)
        if annotator.min() < 0 or annotator.max() >= n_annotators:
            raise ValueError("annotator indices must be between 0 and n_annotators - 1")
        keys = clip[row] * levels.shape[1] + word
        unique, row_word = np.unique(keys, return_inverse=True)
        return cls(
            word_clip=unique // levels.shape[1],
            word_index=unique % levels.shape[1],
            row_word=row_word,
            row_annotator=annotator[row],
            row_level=levels[row, word].astype(np.int64),
            n_annotators=n_annotators,
        )

    @cached_property
    def patterns(self) -> tuple[Patterns, np.ndarray]:
        """The ordinal EM's word patterns and each word's pattern (ordinal_em.Patterns)."""
        return Patterns.of_words(self.word_cells, self.n_annotators)

    @cached_property
    def word_cells(self):
        """(words, annotators x 3) sparse: 1 where the word has a row of that annotator at that
        level (cell annotator * 3 + level). The ordinal model's E and M steps are products with it."""
        cells = self.row_annotator * 3 + self.row_level
        shape = (self.word_clip.size, self.n_annotators * 3)
        ones = np.ones(self.row_word.size)
        return sparse.csr_matrix((ones, (self.row_word, cells)), shape=shape)

    def resampled(self, clips: np.ndarray) -> "_Table":
        """The clips drawn (with repeats), each draw a clip of its own."""
        order = np.argsort(self.word_clip[self.row_word], kind="stable")
        row_clip = self.word_clip[self.row_word][order]
        starts = np.searchsorted(row_clip, clips, side="left")
        ends = np.searchsorted(row_clip, clips, side="right")
        pieces = [order[s:e] for s, e in zip(starts, ends, strict=True)]
        rows = np.concatenate(pieces)
        draw = np.repeat(np.arange(clips.size), [p.size for p in pieces])
        width = int(self.word_index.max()) + 1
        keys = draw * width + self.word_index[self.row_word[rows]]
        unique, row_word = np.unique(keys, return_inverse=True)
        return _Table(
            word_clip=unique // width,
            word_index=unique % width,
            row_word=row_word,
            row_annotator=self.row_annotator[rows],
            row_level=self.row_level[rows],
            n_annotators=self.n_annotators,
        )


def _fit_dawid_skene(table: _Table, _start, drawn: np.ndarray | None) -> dict:
    """crowd-kit's DawidSkene on the binary collapse (of the clips `drawn`, where given)."""
    import pandas as pd  # crowd-kit works on data frames; imported with it, not with the stats package
    from crowdkit.aggregation import DawidSkene

    if drawn is not None:
        table = table.resampled(drawn)
    marks = (table.row_level >= 1).astype(np.int64)
    if marks.min() == marks.max():
        raise _Unfittable("an annotator model needs both marked and unmarked words; every word has the same mark")
    frame = pd.DataFrame({"task": table.row_word, "worker": table.row_annotator, "label": marks})
    with warnings.catch_warnings():
        # crowd-kit 1.4 still passes pandas keywords that pandas 3 deprecates; nothing to act on here.
        warnings.filterwarnings("ignore", module="crowdkit")
        warnings.filterwarnings("ignore", message=".*(copy|inplace) keyword.*")
        fitted = DawidSkene(n_iter=100, tol=1e-5).fit(frame)
    if fitted.probas_ is None or fitted.errors_ is None:  # crowd-kit types them Optional: unset before fit
        raise _Unfittable("crowd-kit's DawidSkene left no estimates")
    probas = fitted.probas_.reindex(index=np.arange(table.word_clip.size), columns=[0, 1], fill_value=0.0)
    errors = fitted.errors_  # index (worker, observed label), columns: true label
    reliability = np.full(table.n_annotators, np.nan)
    workers = errors.index.get_level_values(0).unique().to_numpy()
    sensitivity = errors.xs(1, level=1).reindex(workers)[1].to_numpy()
    false_alarm = errors.xs(1, level=1).reindex(workers)[0].to_numpy()
    reliability[workers.astype(np.int64)] = sensitivity - false_alarm
    # P(observed | true) per annotator, for the held-out standing: (A, observed, true)
    given = np.full((table.n_annotators, 2, 2), 0.5)
    for observed in (0, 1):
        rates = errors.xs(observed, level=1).reindex(workers)
        given[workers.astype(np.int64), observed] = rates[[0, 1]].to_numpy(dtype=np.float64)
    log_given = np.log(np.clip(given, 1e-12, 1.0))
    log_posterior = np.log(np.clip(probas[[0, 1]].to_numpy(dtype=np.float64), 1e-300, 1.0))
    return {
        "posterior": probas[1].to_numpy(dtype=np.float64),
        "reliability": reliability,
        "held_out": (
            log_posterior,
            lambda rows: log_given[table.row_annotator[rows], marks[rows]],
            np.array([False, True]),
        ),
    }


WEIGHT_ROUNDS = 20  # listener_weights' fixed point: a few rounds in practice


def _fit_ordinal(table: _Table, start: dict | None, drawn: np.ndarray | None) -> dict:
    """The ordinal model's EM (evaluation.stats.ordinal_em) on the table's word patterns, and its
    summary. A bootstrap refit (`drawn`: the clips drawn, with repeats) weighs each word by how
    often its clip was drawn, is warm-started from `start`, and gives the reliabilities alone."""
    patterns, word_pattern = table.patterns
    if drawn is not None:
        clip_ids, word_clip = np.unique(table.word_clip, return_inverse=True)
        draws = np.bincount(np.searchsorted(clip_ids, drawn), minlength=clip_ids.size)
        weight = np.bincount(word_pattern, weights=draws[word_clip], minlength=patterns.weight.size)
        patterns = patterns.reweighted(weight)
    parameters, prior, posterior = ordinal_em.fit(patterns, start)
    typical = _TypicalListener.of(parameters, prior, patterns)
    if drawn is not None:
        return {"reliability": typical.reliability()}
    return _ordinal_summary(table, typical, posterior[word_pattern])


@dataclass(frozen=True)
class _TypicalListener:
    """A word is truly emphasized where the published rule would, on average, call it so with the
    study's number of listeners a clip (N, the median), free of who those listeners happened to
    be: where P(Binomial(N, p(theta)) > N/2) >= 1/2, p(theta) being the listeners' mean chance of
    marking a word of that prominence, each annotator weighted by `listener_weights` (a spammer,
    or one who marks every word or none, weighs nothing). Level 2 starts at the same weights'
    median t_2."""

    parameters: np.ndarray
    prior: np.ndarray
    labelled: np.ndarray  # (A,) annotators who gave a level
    mark_chance: np.ndarray  # (A, grid) P(mark | prominence)
    emphasized: np.ndarray  # (grid,) prominences truly emphasized
    level: np.ndarray  # (grid,) their true level

    @classmethod
    def of(cls, parameters: np.ndarray, prior: np.ndarray, patterns: Patterns) -> "_TypicalListener":
        _, t2, _ = thresholds(parameters)
        labelled = patterns.labelled()
        weight = listener_weights(parameters, prior, labelled)
        mark_chance = 1.0 - ordinal_confusion(parameters)[:, :, 0]
        typical = weight @ mark_chance / weight.sum()
        listeners = _listeners_per_word(patterns)
        emphasized = binom.sf(listeners // 2, listeners, typical) >= 0.5  # more than N/2 of N mark it
        level = emphasized.astype(int) + (emphasized & (_weighted_median(t2, weight) <= GRID))
        return cls(parameters, prior, labelled, mark_chance, emphasized, level)

    def reliability(self) -> np.ndarray:
        """(A,) each annotator's Youden's J against the truly emphasized prominences; NaN for those
        who gave no level."""
        inside, outside = self.prior * self.emphasized, self.prior * ~self.emphasized
        marked = self.mark_chance
        reliability = marked @ inside / max(inside.sum(), 1e-12) - marked @ outside / max(outside.sum(), 1e-12)
        reliability[~self.labelled] = np.nan
        return reliability


def _ordinal_summary(table: _Table, typical: _TypicalListener, posterior: np.ndarray) -> dict:
    """The point fit's labels and reliabilities from each word's `posterior` on the grid; "held_out"
    is what HeldOutStanding needs."""
    levels = np.stack([posterior[:, typical.level == k].sum(axis=1) for k in range(3)], axis=1)
    log_confusion = np.log(ordinal_confusion(typical.parameters))
    return {
        "posterior": levels[:, 1:].sum(axis=1),
        "levels": levels,
        "reliability": typical.reliability(),
        "parameters": typical.parameters,
        "prior": typical.prior,
        "held_out": (
            np.log(np.clip(posterior, 1e-300, 1.0)),
            lambda rows: log_confusion[table.row_annotator[rows], :, table.row_level[rows]],
            typical.emphasized,
        ),
    }


def listener_weights(parameters: np.ndarray, prior: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """(A,) each annotator's weight in the crowd's typical listener, who defines what is truly
    emphasized: their discrimination squared, Youden's J of their fitted marks between the words
    the typical listener would mark (chance above 1/2) and the others, under the prominence
    distribution `prior` (on GRID). The typical listener depends on the weights, so both are
    iterated to a fixed point from the spread of each annotator's chance of marking over the
    prominences (0 for one who marks every word, or none, or at random).

    Why not the precision 1 / sigma^2 of the fitted noise: a listener who marks every word
    heavily, none, or only the first content word of a clip fits as a sharp threshold at the edge
    of the words' prominences, with a tiny sigma, and took the typical listener over (issue 31:
    30 % lazy listeners held 77 % of it; 20 % who mark every word made every word emphasized).
    Their marks say little about which words are emphasized, and J says so. Annotators with no
    levels weigh nothing; if no one discriminates at all, every annotator weighs the same."""
    labelled = np.asarray(labelled, dtype=bool)
    mark_chance = 1.0 - ordinal_confusion(parameters)[:, :, 0]  # (A, grid)
    mean = mark_chance @ prior
    weight = np.where(labelled, ((mark_chance - mean[:, None]) ** 2) @ prior, 0.0)
    for _ in range(WEIGHT_ROUNDS):
        if weight.sum() <= 0:
            return labelled.astype(np.float64)
        emphasized = weight @ mark_chance / weight.sum() > 0.5
        inside, outside = prior * emphasized, prior * ~emphasized
        if inside.sum() <= 0 or outside.sum() <= 0:
            break  # the typical listener marks every word or none: keep the weights so far
        youden = mark_chance @ inside / inside.sum() - mark_chance @ outside / outside.sum()
        updated = np.where(labelled, np.clip(youden, 0.0, None) ** 2, 0.0)
        if np.allclose(updated, weight, rtol=1e-6, atol=1e-12):
            break
        weight = updated
    return weight if weight.sum() > 0 else labelled.astype(np.float64)


def _listeners_per_word(patterns: Patterns) -> int:
    """The median number of annotators who gave a word a level (each pattern counted by its weight)."""
    return max(1, int(np.median(np.repeat(patterns.listeners(), patterns.weight.astype(np.int64)))))


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    order = np.argsort(values)
    cumulative = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cumulative, cumulative[-1] / 2)])


_FITS = {"dawid-skene": _fit_dawid_skene, "ordinal": _fit_ordinal}


def _bootstrap_se(replicates: list[np.ndarray], annotators: int) -> np.ndarray:
    if len(replicates) < 2:
        return np.full(annotators, np.nan)
    stacked = np.vstack(replicates)
    present = np.isfinite(stacked).sum(axis=0)
    se = np.full(annotators, np.nan)
    enough = present >= 2
    se[enough] = np.nanstd(stacked[:, enough], axis=0, ddof=1)
    return se


def _se_method(asked: int, fitted: int) -> str:
    if fitted == asked:
        return f"{SE_METHOD}, {asked} resamples"
    return (
        f"{SE_METHOD}, {fitted} of {asked} resamples (the other {asked - fitted} could not be fitted: "
        "every word of their clips had the same mark)"
    )


def _description(model: str) -> str:
    if model == "dawid-skene":
        return f"Dawid-Skene on the binary collapse (crowd-kit {version('crowd-kit')} DawidSkene)"
    return "ordinal Dawid-Skene with latent thresholds (evaluation.stats.annotator_models)"


def _number(value) -> float | None:
    return None if not np.isfinite(value) else float(value)
