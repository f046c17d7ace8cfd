"""Krippendorff's alpha: nominal, ordinal, interval and ratio metrics, any number of raters, missing values.

Pure numpy. Follows Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011):

    coincidences  o_ck = sum over units u with m_u >= 2 pairable values of
                         (n_uc n_uk - [c = k] n_uc) / (m_u - 1)
    n_c = sum_k o_ck,  n = sum_c n_c
    alpha = 1 - D_o / D_e = 1 - (n - 1) sum_ck o_ck d_ck / sum_ck n_c n_k d_ck

with the squared distances d_ck of the metric:
    nominal   [c != k]
    ordinal   (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2   -- Krippendorff's rank metric, built from
              the marginals n_g, not integer weights ("linear"/"quadratic" weighting is another thing)
    interval  (v_c - v_k)^2
    ratio     ((v_c - v_k) / (v_c + v_k))^2, 0 when v_c = v_k = 0 (Krippendorff 2011, "ratio
              metric"; values must not be negative; the krippendorff package's choice for 0 + 0)

For the ratio metric the values are the levels 0, 1, 2 (or any multiple, such as the scalar scores
0, 0.5, 1: only their ratios count), so "not emphasized" is the true zero: it is as far from 1 as
from 2 (d = 1), and 1 and 2 are 1/9 apart.

Alpha is undefined when no unit has two values, and when every pairable value is in one
category (expected disagreement 0, alpha 0/0).

Every coincidence is kept as integer sums per number of pairable values m (the division by
m - 1 comes last), so a bootstrap resample of clips is an exact sum of per-clip integers
(see evaluation.stats.resampling).
"""

from dataclasses import dataclass

import numpy as np

from evaluation.stats.resampling import cluster_sums

METRICS = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class AlphaLayout:
    pairable: tuple[int, ...]  # distinct numbers m >= 2 of values in a unit, ascending
    categories: int

    @property
    def width(self) -> int:
        return len(self.pairable) * self.categories**2


@dataclass(frozen=True)
class AlphaResult:
    value: float | None
    reason: str  # why value is None; empty when defined
    pairable_values: int  # n: values in units with two or more


def alpha_layout(counts: np.ndarray) -> AlphaLayout:
    counts = np.asarray(counts)
    values = np.unique(counts.sum(axis=1))
    return AlphaLayout(tuple(int(m) for m in values if m >= 2), counts.shape[1])


def alpha_cluster_statistics(counts: np.ndarray, codes: np.ndarray, clusters: int, layout: AlphaLayout):
    """(clusters x layout.width): per m, the q x q integer sums of n_uc n_uk - [c = k] n_uc."""
    counts = np.asarray(counts, dtype=np.int64)
    values = counts.sum(axis=1)
    q = layout.categories
    blocks = []
    for m in layout.pairable:
        rows = values == m
        unit_counts, unit_codes = counts[rows], codes[rows]
        for c in range(q):
            for k in range(q):
                pairs = unit_counts[:, c] * unit_counts[:, k] - (unit_counts[:, c] if c == k else 0)
                blocks.append(cluster_sums(pairs, unit_codes, clusters))
    if not blocks:
        return np.zeros((clusters, 0))
    return np.stack(blocks, axis=1)


def alpha_from_sums(sums: np.ndarray, layout: AlphaLayout, metric: str, values=None) -> np.ndarray:
    """Alpha for each row of summed statistics; NaN where undefined."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, not {metric!r}")
    sums = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    q = layout.categories
    o = np.zeros((sums.shape[0], q, q))
    for j, m in enumerate(layout.pairable):
        o = o + sums[:, j * q * q : (j + 1) * q * q].reshape(-1, q, q) / (m - 1)
    marginals = o.sum(axis=2)
    total = marginals.sum(axis=1)
    distances = _distances(metric, marginals, q, values)
    observed = (o * distances).sum(axis=(1, 2))
    expected = (marginals[:, :, None] * marginals[:, None, :] * distances).sum(axis=(1, 2))
    defined = (marginals > 0).sum(axis=1) >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(defined, 1 - (total - 1) * observed / expected, np.nan)


def alpha(counts: np.ndarray, metric: str, values=None) -> AlphaResult:
    """Alpha of a (units x categories) count matrix; `values` places the categories for the interval
    and ratio metrics (default 0, 1, ...); for the ordinal metric only their order matters."""
    counts = np.asarray(counts, dtype=np.int64)
    layout = alpha_layout(counts)
    totals = alpha_cluster_statistics(counts, np.zeros(counts.shape[0], dtype=np.int64), 1, layout)
    return alpha_result(counts, totals.sum(axis=0), layout, metric, values)


def alpha_result(counts: np.ndarray, totals: np.ndarray, layout: AlphaLayout, metric: str, values=None):
    """AlphaResult from the summed statistics of `counts`, with the reason when undefined."""
    pairable = counts[counts.sum(axis=1) >= 2]
    if not layout.pairable:
        return AlphaResult(None, "no unit has two or more values", 0)
    used = np.flatnonzero(pairable.sum(axis=0) > 0)
    if used.size < 2:
        reason = f"every pairable value is in one category (category {int(used[0])}): expected disagreement is 0"
        return AlphaResult(None, reason + ", alpha is 0/0", int(pairable.sum()))
    return AlphaResult(float(alpha_from_sums(totals, layout, metric, values)[0]), "", int(pairable.sum()))


def _distances(metric: str, marginals: np.ndarray, q: int, values) -> np.ndarray:
    if metric == "nominal":
        return (1.0 - np.eye(q))[None, :, :]
    if metric in ("interval", "ratio"):
        return _value_distances(metric, q, values)[None, :, :]
    index = np.arange(q)
    low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
    cumulative = np.concatenate([np.zeros((marginals.shape[0], 1)), np.cumsum(marginals, axis=1)], axis=1)
    between = cumulative[:, high + 1] - cumulative[:, low]  # sum of n_g for g from c to k
    halves = (marginals[:, low] + marginals[:, high]) / 2
    return (between - halves) ** 2


def _value_distances(metric: str, q: int, values) -> np.ndarray:
    v = np.arange(q, dtype=np.float64) if values is None else np.asarray(values, dtype=np.float64)
    if v.shape != (q,):
        raise ValueError(f"values must give one number for each of the {q} categories")
    difference = v[:, None] - v[None, :]
    if metric == "interval":
        return difference**2
    if np.any(v < 0):
        raise ValueError("the ratio metric needs values that are not negative")
    total = v[:, None] + v[None, :]
    return np.divide(difference, total, out=np.zeros((q, q)), where=total != 0) ** 2
