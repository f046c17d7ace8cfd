"""ROC curve, AUROC and equal error rate of scores against binary labels, with a percentile bootstrap
over instances. Pure numpy.

- ROC points: one per distinct score, from the highest down (a threshold t calls "positive" every
  instance scoring >= t), after the point (0, 0). Tied scores move together, so a tie between a
  positive and a negative is a diagonal step: the same points as sklearn.metrics.roc_curve with
  drop_intermediate=False.
- AUROC: the area under those points (trapezoids). It is the probability that a random positive
  scores above a random negative, ties counting one half (sklearn's roc_auc_score).
- EER (equal error rate): the error rate where the false positive rate equals the false negative
  rate (1 - TPR), found on the straight line between the two ROC points where FPR - FNR changes
  sign. Lower is better; 0.5 is chance.
- Bootstrap: instances drawn with replacement (numpy PCG64 from the seed, as
  evaluation.stats.resampling draws clips), AUROC and EER recomputed on each resample; a resample
  holding only one class has neither, and is counted and left out of the percentile interval.

Undefined (None, with the reason) without an instance of each class.
"""

import numpy as np

from evaluation.stats.intervals import too_few
from evaluation.stats.resampling import generator, percentile_interval

METHOD = "percentile bootstrap over instances (instances resampled with replacement)"
_DRAWS_PER_CHUNK = 1_000_000  # resample counts of a chunk stay a few MB


def one_class_reason(labels) -> str | None:
    """Why AUROC is undefined for these labels, or None."""
    positives = int(np.sum(labels))
    if len(labels) == 0:
        return "no instance has both a score and a label"
    if positives == 0 or positives == len(labels):
        return f"every scored instance is {'positive' if positives else 'negative'}: AUROC needs both classes"
    return None


def _groups(labels, scores):
    """Instances sorted by score, highest first, and where each run of equal scores starts."""
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    starts = np.flatnonzero(np.concatenate([[True], sorted_scores[1:] != sorted_scores[:-1]]))
    return order, starts, sorted_scores[starts]


def _rates(positive_counts, negative_counts):
    """(FPR, TPR) at every threshold, (0, 0) first, from counts per score run (last axis: runs)."""
    tp, fp = np.cumsum(positive_counts, axis=-1), np.cumsum(negative_counts, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):  # a resample without a class: NaN, left out
        tpr, fpr = tp / tp[..., -1:], fp / fp[..., -1:]
    zero = np.zeros((*tpr.shape[:-1], 1))
    return np.concatenate([zero, fpr], axis=-1), np.concatenate([zero, tpr], axis=-1)


def area(fpr, tpr):
    return np.trapezoid(tpr, fpr, axis=-1)


def equal_error_rate(fpr, tpr):
    """FPR = FNR by linear interpolation between ROC points (works row by row on 2-d input)."""
    fpr, tpr = np.atleast_2d(fpr), np.atleast_2d(tpr)
    gap = fpr - (1 - tpr)  # FPR - FNR: -1 at (0, 0), +1 at (1, 1), never decreasing between
    after = np.argmax(gap >= 0, axis=-1)
    before = np.maximum(after - 1, 0)
    rows = np.arange(fpr.shape[0])
    g0, g1 = gap[rows, before], gap[rows, after]
    with np.errstate(invalid="ignore", divide="ignore"):  # rows of NaN (a resample of one class)
        share = -g0 / (g1 - g0)  # where the line between the two points crosses FPR = FNR
        eer = fpr[rows, before] + share * (fpr[rows, after] - fpr[rows, before])
    return np.where(np.isnan(gap).any(axis=-1), np.nan, eer)


def roc_points(labels, scores) -> dict:
    """The ROC curve for a plot: fpr, tpr and the threshold of each point (None for (0, 0))."""
    labels = np.asarray(labels, dtype=bool)
    order, starts, thresholds = _groups(labels, scores)
    ordered = labels[order]
    fpr, tpr = _rates(np.add.reduceat(ordered, starts), np.add.reduceat(~ordered, starts))
    return {"fpr": fpr.tolist(), "tpr": tpr.tolist(), "thresholds": [None, *thresholds.tolist()]}


def roc_scores(labels, scores, *, resamples: int, seed: int, confidence: float = 0.95) -> dict:
    """AUROC and EER of scores against labels (True or 1: positive), with bootstrap intervals."""
    labels = np.asarray(labels, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    counts = {"instances": int(labels.size), "positives": int(labels.sum()), "negatives": int((~labels).sum())}
    reason = one_class_reason(labels)
    run = {"method": METHOD, "resamples": resamples, "seed": seed}
    if reason:
        undefined = {
            "value": None,
            "reason": reason,
            "ci95": None,
            "ci95_undefined": reason,
            "resamples_undefined": None,
        }
        return {**counts, "auroc": undefined, "eer": undefined, "roc": None, **run}
    curve = roc_points(labels, scores)
    fpr, tpr = np.asarray(curve["fpr"]), np.asarray(curve["tpr"])
    auroc, eer = float(area(fpr, tpr)), float(equal_error_rate(fpr, tpr)[0])
    boot_auroc, boot_eer, why_none = _bootstrap(labels, scores, resamples=resamples, seed=seed)
    return {
        **counts,
        "auroc": _with_interval(auroc, boot_auroc, why_none, confidence),
        "eer": _with_interval(eer, boot_eer, why_none, confidence),
        "roc": curve,
        **run,
    }


def _with_interval(value: float, resampled, why_none: str | None, confidence: float) -> dict:
    if why_none:
        return {"value": value, "reason": None, "ci95": None, "ci95_undefined": why_none, "resamples_undefined": None}
    interval = percentile_interval(resampled, confidence=confidence)
    if interval.low is None:
        why = "fewer than two resamples hold both classes"
        return {
            "value": value,
            "reason": None,
            "ci95": None,
            "ci95_undefined": why,
            "resamples_undefined": interval.undefined,
        }
    return {
        "value": value,
        "reason": None,
        "ci95": [interval.low, interval.high],
        "ci95_undefined": None,
        "resamples_undefined": interval.undefined,
    }


def _bootstrap(labels, scores, *, resamples: int, seed: int):
    """AUROC and EER of each resample (NaN where it holds one class only), or why there are none."""
    few = too_few(int(labels.size), "instances")
    if few or resamples == 0:
        return None, None, few or "no resamples asked for"
    order, starts, _ = _groups(labels, scores)
    positive = labels[order]
    aurocs, eers = [], []
    for counts in resample_counts(labels.size, resamples=resamples, seed=seed):
        ordered = counts[:, order]
        fpr, tpr = _rates(
            np.add.reduceat(ordered * positive, starts, axis=1), np.add.reduceat(ordered * ~positive, starts, axis=1)
        )
        aurocs.append(area(fpr, tpr))
        eers.append(equal_error_rate(fpr, tpr))
    return np.concatenate(aurocs), np.concatenate(eers), None


def resample_counts(units: int, *, resamples: int, seed: int):
    """Chunks of (resamples x units) counts: how often each unit is drawn into each resample. The
    draws are those of evaluation.stats.resampling.bootstrap_sums (uniform 32-bit indices, resample
    by resample), so the same seed draws the same units however the chunks fall."""
    rng = generator(seed=seed)
    chunk = max(1, min(resamples, _DRAWS_PER_CHUNK // units))
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        drawn = rng.integers(0, units, size=(rows, units), dtype=np.uint32).astype(np.int64)
        drawn += np.arange(rows)[:, None] * units
        yield np.bincount(drawn.ravel(), minlength=rows * units).reshape(rows, units)
