"""When an interval can be given, and the two kinds the agreement measures share. Pure numpy and scipy.

Too few units. An interval from fewer than MIN_UNITS independent units (clips for the clip-clustered
intervals and the clip bootstrap; words, items or ratings where those are the units) is not given:
with 2 to 4 units a Student-t interval spans most of [-1, 1] (t(0.975, 1) = 12.7) and a percentile
bootstrap draws from a handful of distinct resamples, so neither reads as a measurement in a paper
table. The measure itself stays; its interval is null with the reason `too_few` gives.

Student-t interval: value -/+ t(1 - (1 - confidence) / 2, df) * se, cut to the measure's range
(agreement coefficients: [-1, 1], as irrCAC caps at 1; a mean opinion score: its rating scale).

Linearized standard errors (Gwet, Handbook of Inter-Rater Reliability, 4th ed., 2014, ch. 5): given
each unit's deviation d_i = x*_i - estimate of the linearized statistic,

    var_units    = sum_i d_i^2 / (n (n - 1))                              units drawn independently
    var_clusters = C / (C - 1) * sum_c (sum_{i in c} d_i)^2 / n^2          clusters (clips) drawn

the second being the cluster-robust form, equal to the first when every cluster has one unit.
"""

import math

import numpy as np
from scipy.stats import t as student_t

from evaluation.stats.resampling import cluster_sums

MIN_UNITS = 5
CONFIDENCE = 0.95


def too_few(units: int, noun: str) -> str | None:
    """The reason an interval is not given, or None when there are units enough."""
    if units >= MIN_UNITS:
        return None
    return f"too few {noun} for an interval: {units} (needs at least {MIN_UNITS})"


def t_interval(
    value: float, se: float | None, df: int, *, confidence: float = CONFIDENCE, bounds=(-1.0, 1.0)
) -> tuple[float, float] | None:
    if se is None or df < 1 or not math.isfinite(se):
        return None
    half = float(student_t.ppf(1 - (1 - confidence) / 2, df)) * se
    return max(bounds[0], value - half), min(bounds[1], value + half)


def linearized_se(deviations: np.ndarray, codes: np.ndarray, clusters: int) -> tuple[float | None, float | None]:
    """(se with clusters drawn, se with units drawn independently); None where fewer than two."""
    deviations = np.asarray(deviations, dtype=np.float64)
    units = int(deviations.size)
    se_units = math.sqrt(math.fsum((deviations**2).tolist()) / (units * (units - 1))) if units >= 2 else None
    se_clusters = None
    if clusters >= 2:
        per_cluster = cluster_sums(deviations, codes, clusters)
        se_clusters = math.sqrt(clusters / (clusters - 1) * math.fsum((per_cluster**2).tolist()) / units**2)
    return se_clusters, se_units
