"""Emphasis statistics: how much is emphasized, the spread of scalar scores, mismatch reports. Pure numpy.

- label rate: share of words whose binary label (more than half of the annotators marked it) is
  emphasized -- MMEE's "emphasis rate";
- mark rate: share of all word judgements at level 1 or 2; heavy rate: at level 2;
- scalar scores: the mean of 0 / 0.5 / 1 per word, in 20 bins of width 0.05 ([i/20, (i+1)/20),
  the last one closed), binned in integers so no score falls on the wrong side of an edge.
"""

import math

import numpy as np

from annotation.mismatch_rule import mismatch_sends_to_review
from evaluation.stats.aggregation import binary_labels

HISTOGRAM_BINS = 20


def emphasis_rates(counts: np.ndarray) -> dict:
    """Rates over the words of a (units x 3) level-count matrix that were labelled at least once."""
    counts = np.asarray(counts, dtype=np.int64)
    counts = counts[counts.sum(axis=1) > 0]
    words, judgements = int(counts.shape[0]), int(counts.sum())
    if words == 0:
        return {"words": 0, "label_rate": None, "mark_rate": None, "heavy_rate": None, "mean_scalar": None}
    scores = (counts[:, 1] + 2 * counts[:, 2]) / (2 * counts.sum(axis=1))
    return {
        "words": words,
        "label_rate": int(binary_labels(counts).sum()) / words,
        "mark_rate": int(counts[:, 1:].sum()) / judgements,
        "heavy_rate": int(counts[:, 2].sum()) / judgements,
        "mean_scalar": math.fsum(scores.tolist()) / words,
    }


def scalar_histogram(counts: np.ndarray, *, bins: int = HISTOGRAM_BINS) -> list[int]:
    """Words per scalar-score bin; bin b holds scores in [b/bins, (b+1)/bins), the last bin also 1."""
    counts = np.asarray(counts, dtype=np.int64)
    counts = counts[counts.sum(axis=1) > 0]
    doubled_sum, doubled_total = counts[:, 1] + 2 * counts[:, 2], 2 * counts.sum(axis=1)
    index = np.minimum((bins * doubled_sum) // doubled_total, bins - 1)
    return np.bincount(index, minlength=bins).astype(int).tolist()


def histogram_edges(bins: int = HISTOGRAM_BINS) -> list[float]:
    return [b / bins for b in range(bins + 1)]


def mismatch_summary(reports_per_clip: np.ndarray, clip_keys, *, threshold: int) -> dict:
    """Mismatch reports ("audio does not match the transcript") per clip, for clips with annotations."""
    reports = np.asarray(reports_per_clip, dtype=np.int64)
    distribution = np.bincount(reports, minlength=1) if reports.size else np.zeros(1, dtype=np.int64)
    at_threshold = [
        key
        for key, count in zip(clip_keys, reports.tolist())
        if mismatch_sends_to_review(reports=count, threshold=threshold)
    ]
    return {
        "threshold": threshold,
        "clips": int(reports.size),
        "reports": int(reports.sum()),
        "clips_with_reports": int((reports > 0).sum()),
        "clips_at_threshold": len(at_threshold),
        "clips_at_threshold_keys": sorted(at_threshold),
        "clips_by_reports": {str(k): int(c) for k, c in enumerate(distribution.tolist()) if c},
    }
