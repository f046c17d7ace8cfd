"""Clip (cluster) bootstrap by sums of per-clip statistics. Pure numpy.

The words of a clip share their annotators, so a resample draws whole clips: C clips with
replacement out of C. Every measure here is a function of sums over units of integer statistics,
so each clip's statistics are summed once, and a resample is the count-weighted sum

    sums (resamples x statistics) = counts (resamples x clips) @ per-clip statistics (clips x statistics).

The statistics are integers and their sums stay below 2**53, so the products are exact in
float64 whatever order BLAS adds them in: the same seed gives the same bits on any machine. The
products are small (a few resamples at a time, so that the counts stay in cache), where BLAS
threads cost more than they give -- many times more on a busy machine -- so they run on one
thread (evaluation.stats.blas).

Draws: numpy's PCG64 seeded with the report's seed alone, clip indices drawn uniformly
(Generator.integers, 32-bit) resample by resample, a fresh generator for every call. The draws depend
on the seed and the number of clips only, so the interval of a group is a function of its clips'
statistics and the seed: two groups with the same annotations (a language with one variety, or a
report restricted to that language) get identical intervals, and no group's interval depends on
which other groups a report has. (Groups of the same size share draw indices, which leaves each
group's interval valid; it only correlates the resampling noise of different groups.)
"""

from dataclasses import dataclass

import numpy as np

from evaluation.stats.blas import one_blas_thread

METHOD = "percentile bootstrap over clips (whole clips resampled with replacement)"
_BINS_PER_CHUNK = 65_536


@dataclass(frozen=True)
class BootstrapInterval:
    low: float | None
    high: float | None
    se: float | None  # standard deviation of the resampled values
    resamples: int
    undefined: int  # resamples where the measure was undefined (left out)


def generator(*, seed: int) -> np.random.Generator:
    if seed < 0:
        raise ValueError("seed must be a non-negative integer")
    return np.random.default_rng(int(seed))


def bootstrap_sums(per_clip: np.ndarray, *, resamples: int, seed: int) -> np.ndarray:
    """(resamples x statistics) sums of per-clip statistics over resampled clips."""
    per_clip = np.asarray(per_clip, dtype=np.float64)
    clips = per_clip.shape[0]
    sums = np.zeros((resamples, per_clip.shape[1]))
    with one_blas_thread():
        for start, counts in resample_counts(clips=clips, resamples=resamples, seed=seed):
            sums[start : start + counts.shape[0]] = counts.astype(np.float64) @ per_clip
    return sums


def resample_counts(*, clips: int, resamples: int, seed: int):
    """(first resample, counts): how often each clip is drawn in each resample, a chunk of
    resamples at a time (rows: resamples, columns: clips). Every measure that resamples the same
    clips with the same seed sees the same draws."""
    if clips == 0 or resamples == 0:
        return
    rng = generator(seed=seed)
    chunk = max(1, min(resamples, _BINS_PER_CHUNK // clips))  # the counts of a chunk stay in cache
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        drawn = rng.integers(0, clips, size=(rows, clips), dtype=np.uint32).astype(np.int64)
        drawn += np.arange(rows)[:, None] * clips
        yield start, np.bincount(drawn.ravel(), minlength=rows * clips).reshape(rows, clips)


def percentile_interval(values: np.ndarray, *, confidence: float = 0.95) -> BootstrapInterval:
    """Percentile interval (numpy's default linear interpolation) of the defined (non-NaN) values."""
    values = np.asarray(values, dtype=float)
    defined = values[~np.isnan(values)]
    undefined = int(values.size - defined.size)
    if defined.size < 2:
        return BootstrapInterval(None, None, None, int(values.size), undefined)
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(np.sort(defined), [tail, 100 - tail])
    return BootstrapInterval(float(low), float(high), float(np.std(defined, ddof=1)), int(values.size), undefined)


def cluster_codes(clusters: np.ndarray) -> tuple[np.ndarray, int]:
    """Cluster labels renumbered 0.. in sorted order, and how many there are."""
    labels, codes = np.unique(np.asarray(clusters), return_inverse=True)
    return codes.astype(np.int64), int(labels.size)


def cluster_sums(values: np.ndarray, codes: np.ndarray, clusters: int) -> np.ndarray:
    """Sums of a per-unit statistic over the units of each cluster (codes from cluster_codes)."""
    return np.bincount(codes, weights=np.asarray(values, dtype=np.float64), minlength=clusters)
