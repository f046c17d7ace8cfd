"""Benchmark metrics on per-word predictions: binary accuracy and F1 (emphasized = positive),
scalar Pearson correlation; pooled and per language, each with a 95 % interval from the
agreement module's clip bootstrap (evaluation.stats.resampling: whole clips are resampled, since
the words of a clip share a speaker and annotators).

Each measure is a function of sums of per-clip statistics, which is what the bootstrap resamples:
- accuracy = correct / words;  F1 = 2 TP / (2 TP + FP + FN);
- Pearson from n, sum x, sum y, sum x^2, sum y^2, sum xy of (label, prediction).
The binary statistics are integers (exact in any order); the Pearson sums are floats, so their
intervals can differ in the last bits between machines.

With fewer than evaluation.stats.intervals.MIN_UNITS clips a group gets no interval (a bootstrap of
one or two clips gives "1.000 [1.000, 1.000]"), its entries saying why (interval_undefined), as the
agreement report does. Each group also counts the words its labels mark emphasized and the words
the detector marked, which say what an F1 of 0 means (no word marked, or none labelled).
"""

import functools
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from evaluation.stats.intervals import too_few
from evaluation.stats.resampling import METHOD, bootstrap_sums, percentile_interval

# columns of the per-clip statistics
WORDS, CORRECT, TP, FP, FN, SX, SY, SXX, SYY, SXY = range(10)
MEASURES = ("accuracy", "f1", "pearson")


def clip_statistics(rows: list[dict]) -> np.ndarray:
    """One clip's statistics from its word rows (binary_true/pred, scalar_true/pred)."""
    truth = np.array([row["binary_true"] for row in rows], dtype=bool)
    guess = np.array([row["binary_pred"] for row in rows], dtype=bool)
    x = np.array([row["scalar_true"] for row in rows], dtype=np.float64)
    y = np.array([row["scalar_pred"] for row in rows], dtype=np.float64)
    return np.array(
        [
            len(rows),
            np.sum(truth == guess),
            np.sum(truth & guess),
            np.sum(~truth & guess),
            np.sum(truth & ~guess),
            x.sum(),
            y.sum(),
            (x * x).sum(),
            (y * y).sum(),
            (x * y).sum(),
        ],
        dtype=np.float64,
    )


def measures_from_sums(sums: np.ndarray) -> dict[str, np.ndarray]:
    """accuracy, f1, pearson from (... x statistics) sums; NaN where a measure is undefined."""
    sums = np.atleast_2d(sums)
    n = sums[:, WORDS]
    with np.errstate(divide="ignore", invalid="ignore"):
        accuracy = sums[:, CORRECT] / n
        f1 = 2 * sums[:, TP] / (2 * sums[:, TP] + sums[:, FP] + sums[:, FN])
        cov = sums[:, SXY] - sums[:, SX] * sums[:, SY] / n
        var_x = sums[:, SXX] - sums[:, SX] ** 2 / n
        var_y = sums[:, SYY] - sums[:, SY] ** 2 / n
        pearson = cov / np.sqrt(var_x * var_y)
    # a constant label or prediction has no correlation (rounding can leave a tiny non-zero variance)
    constant = (var_x <= 1e-12 * np.maximum(n, 1)) | (var_y <= 1e-12 * np.maximum(n, 1))
    pearson = np.where(constant, np.nan, np.clip(pearson, -1.0, 1.0))
    return {"accuracy": accuracy, "f1": f1, "pearson": pearson}


def score(
    rows: Iterable[dict], *, resamples: int = 1000, seed: int = 0, confidence: float = 0.95, by: str = "language"
) -> dict:
    """Metrics of per-word prediction rows (clip_id, language, binary_true, binary_pred,
    scalar_true, scalar_pred): {"pooled": group, "by_language": {language: group}, "interval": how},
    grouped by the rows' `by` column ("language", or "variety" for regional varieties),
    a group being {"clips", "words", "emphasized", "marked", "accuracy", "f1", "pearson"}, each measure
    {"value", "low", "high"} (None where undefined; no interval with resamples=0, nor from too few
    clips, which adds "interval_undefined": the reason)."""
    by_clip: dict[str, list[dict]] = defaultdict(list)
    group_of: dict[str, str] = {}
    for row in rows:
        by_clip[row["clip_id"]].append(row)
        group_of[row["clip_id"]] = row[by]
    clip_ids = list(by_clip)
    per_clip = np.array([clip_statistics(by_clip[clip_id]) for clip_id in clip_ids]).reshape(len(clip_ids), 10)
    groups = np.array([group_of[clip_id] for clip_id in clip_ids])
    group = functools.partial(_group, resamples=resamples, seed=seed, confidence=confidence)
    return {
        "pooled": group(per_clip),
        "by_language": {name: group(per_clip[groups == name]) for name in sorted(set(groups))},
        "grouped_by": by,
        "interval": f"{int(confidence * 100)} % {METHOD}" if resamples else "none",
    }


def _group(per_clip: np.ndarray, *, resamples: int, seed: int, confidence: float) -> dict:
    totals = per_clip.sum(axis=0)
    point = measures_from_sums(totals)
    clips = int(per_clip.shape[0])
    result: dict[str, Any] = {
        "clips": clips,
        "words": int(totals[WORDS]),
        "emphasized": int(totals[TP] + totals[FN]),  # by the labels
        "marked": int(totals[TP] + totals[FP]),  # by the detector
    }
    few = too_few(clips, "clips") if resamples else None
    bootstrap = resamples and not few
    resampled = measures_from_sums(bootstrap_sums(per_clip, resamples=resamples, seed=seed)) if bootstrap else None
    for measure in MEASURES:
        value = float(point[measure][0])
        entry: dict[str, Any] = {"value": None if np.isnan(value) else value, "low": None, "high": None}
        if resampled is not None:
            interval = percentile_interval(resampled[measure], confidence=confidence)
            entry |= {"low": interval.low, "high": interval.high}
        elif few and entry["value"] is not None:
            entry["interval_undefined"] = few
        result[measure] = entry
    return result


def selection_value(metrics: dict, measure: str) -> float:
    """The pooled value best-checkpoint selection compares; -inf where undefined."""
    value = metrics["pooled"][measure]["value"]
    return float("-inf") if value is None else value
