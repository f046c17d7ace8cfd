"""How an annotator model's labels stand against the majority's on a study's own annotations, with
no truth: each annotation held out in turn (HeldOutStanding). Pure numpy; no Django. Split from
evaluation.stats.annotator_models, whose fits carry it."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HeldOutStanding:
    """The model's labels against the majority's on the study's own annotations, with no truth: each
    annotation in turn is held out, each rule labels its words from the word's other annotations
    (the model keeps its fitted parameters and drops the held-out annotation from the word's
    posterior; the majority is more than half of the others), and each is scored by how often it
    agrees with the held-out listener's binary mark. A label that a fresh listener of the same
    crowd agrees with more often is the better guess of what the crowd hears; the difference is
    decided only on the words where the two rules disagree. Each held-out mark is weighted by its
    listener's discrimination against the other listeners' majority (J squared): a listener who
    marks every word or none would otherwise favour whichever rule labels more words, or fewer.
    Its 95 % interval treats clips as clusters (a clip's annotations share its audio and its
    listeners)."""

    held_out: int  # annotations scored (on words with two or more annotations)
    model_agreement: float  # share of held-out marks the model's label agrees with
    majority_agreement: float
    difference: float  # model_agreement - majority_agreement
    low: float  # its 95 % interval
    high: float

    @property
    def model_better(self) -> bool:
        return self.low > 0

    @property
    def verdict(self) -> str:
        if self.model_better:
            return "better"
        return "worse" if self.high < 0 else "no better"

    def as_dict(self) -> dict:
        return {
            "held_out": self.held_out,
            "model_agreement": self.model_agreement,
            "majority_agreement": self.majority_agreement,
            "difference": self.difference,
            "interval": [self.low, self.high],
            "verdict": self.verdict,
            "method": STANDING_METHOD,
        }


STANDING_METHOD = (
    "each annotation held out in turn; the model's label (fitted parameters, the word's other "
    "annotations) and the majority of the word's other annotations scored by agreement with the "
    "held-out binary mark, weighted by the held-out listener's Youden's J squared against the "
    "others' majority; 95 % interval with clips as clusters"
)


_CHUNK = 200_000  # held-out rows scored at once (rows x classes floats)


def held_out_standing(table, point: dict, *, chunk: int = _CHUNK) -> HeldOutStanding | None:
    """HeldOutStanding of a point fit (its "held_out": each word's log posterior over the model's
    classes, each row's log-likelihood per class, which classes are emphasized) on a table of rows
    (annotator_models': row_word, row_level, row_annotator, word_clip, n_annotators); None where no
    word has two annotations. `chunk`: held-out rows scored at once (fewer for many classes)."""
    log_posterior, row_loglik, emphasized = point["held_out"]
    marks = table.row_level >= 1
    count = np.bincount(table.row_word, minlength=table.word_clip.size)
    marked = np.bincount(table.row_word, weights=marks, minlength=table.word_clip.size)
    rows = np.flatnonzero(count[table.row_word] >= 2)
    if rows.size == 0:
        return None
    model = np.empty(rows.size, dtype=bool)
    for start in range(0, rows.size, chunk):
        part = rows[start : start + chunk]
        loo = log_posterior[table.row_word[part]] - row_loglik(part)
        loo = np.exp(loo - loo.max(axis=1, keepdims=True))
        model[start : start + part.size] = loo[:, emphasized].sum(axis=1) > 0.5 * loo.sum(axis=1)
    word = table.row_word[rows]
    majority = 2 * (marked[word] - marks[rows]) > count[word] - 1
    weight = _held_out_weights(table.row_annotator[rows], marks[rows], majority, table.n_annotators)
    if weight.sum() <= 0:
        weight = np.ones(rows.size)
    model_agrees, majority_agrees = model == marks[rows], majority == marks[rows]
    difference = model_agrees.astype(np.float64) - majority_agrees
    clip = np.unique(table.word_clip[word], return_inverse=True)[1]
    mean, low, high = _clustered_interval(difference, weight, clip)
    return HeldOutStanding(
        held_out=int(rows.size),
        model_agreement=float(np.average(model_agrees, weights=weight)),
        majority_agreement=float(np.average(majority_agrees, weights=weight)),
        difference=mean,
        low=low,
        high=high,
    )


def _held_out_weights(annotator, marks, majority, annotators) -> np.ndarray:
    """Each held-out mark's weight: its listener's discrimination squared, judged by the majority of
    the other listeners and not by the model (Youden's J of their marks against those majorities).
    A listener who marks every word, none, or at random says nothing about which rule is right
    (they would favour whichever labels more, or fewer, words), so their marks weigh nothing."""

    def rate(where):
        hits = np.bincount(annotator[where], weights=marks[where], minlength=annotators)
        total = np.bincount(annotator[where], minlength=annotators)
        return np.divide(hits, total, out=np.full(annotators, np.nan), where=total > 0)

    youden = np.nan_to_num(rate(majority) - rate(~majority), nan=0.0)
    return np.clip(youden, 0.0, None)[annotator] ** 2


def _clustered_interval(values: np.ndarray, weights: np.ndarray, cluster: np.ndarray) -> tuple[float, float, float]:
    """The weighted mean of `values` and its 95 % normal interval, the clusters independent (the
    cluster-robust variance of a ratio estimator)."""
    clusters = int(cluster.max()) + 1
    mean = float(np.average(values, weights=weights))
    sums = np.bincount(cluster, weights=weights * (values - mean), minlength=clusters)
    se = np.sqrt(clusters / max(clusters - 1, 1) * (sums**2).sum()) / weights.sum()
    return mean, float(mean - 1.959964 * se), float(mean + 1.959964 * se)
