"""Fleiss' kappa for any number of raters per unit, with its (non-null) standard error. Pure numpy.

Point estimate -- Fleiss (1971), generalized to units rated by different numbers of raters as in
Gwet, Handbook of Inter-Rater Reliability (4th ed., 2014) and irrCAC's fleiss.kappa.raw. With n
units rated at least once, r_i ratings of unit i and r_ik of them in category k:

    p_a   = mean over the n2 units with r_i >= 2 of  sum_k r_ik (r_ik - 1) / (r_i (r_i - 1))
    pi_k  = (1/n) sum_i r_ik / r_i,     p_e = sum_k pi_k^2,     kappa = (p_a - p_e) / (1 - p_e)

With the same number of raters on every unit this is Fleiss' kappa exactly (statsmodels'
fleiss_kappa). Kappa is undefined (0/0) when every rating is in one category, and when no unit
has two ratings.

Standard error -- NOT the variance under the null hypothesis kappa = 0 (Fleiss, Nee & Landis
1979; the `z` of R's irr::kappam.fleiss), which is far too small for a confidence interval when
kappa is not 0. Gwet's linearization (Handbook, ch. 5; irrCAC fleiss.kappa.raw), per unit:

    kappa_i  = (n/n2) (p_a,i - p_e [r_i >= 2]) / (1 - p_e),  p_a,i = sum_k r_ik (r_ik - 1) / (r_i (r_i - 1))
    p_e,i    = sum_k r_ik pi_k / r_i
    kappa*_i = kappa_i - 2 (1 - kappa) (p_e,i - p_e) / (1 - p_e)

    var_units = sum_i (kappa*_i - kappa)^2 / (n (n - 1))          (units drawn independently)

and, because the words of a clip share their annotators, the same linearized values summed per
clip (cluster-robust; equal to var_units when every clip has one unit):

    var_clips = C/(C - 1) * sum_c (sum_{i in c} (kappa*_i - kappa))^2 / n^2

95 % intervals: kappa -/+ t(0.975, df) * se, df = n - 1 or C - 1, the upper bound capped at 1
(as irrCAC does; the lower at -1); none from fewer than evaluation.stats.intervals.MIN_UNITS units
or clips, with the reason (evaluation.stats.intervals).
"""

from dataclasses import dataclass

import numpy as np

from evaluation.stats.intervals import linearized_se, t_interval, too_few
from evaluation.stats.resampling import cluster_codes, cluster_sums


@dataclass(frozen=True)
class FleissLayout:
    """Columns of the per-cluster statistics: units, paired units, then per rater count r."""

    raters: tuple[int, ...]  # distinct numbers of ratings per unit, ascending
    categories: int

    @property
    def paired(self) -> tuple[int, ...]:
        return tuple(r for r in self.raters if r >= 2)

    @property
    def width(self) -> int:
        return 2 + len(self.paired) + len(self.raters) * self.categories


@dataclass(frozen=True)
class FleissResult:
    value: float | None
    reason: str  # why value is None; empty when defined
    pa: float | None
    pe: float | None
    units: int  # units with at least one rating
    units_paired: int  # units with two or more
    clusters: int
    se: float | None  # clusters (clips) as the sampling unit
    ci: tuple[float, float] | None
    se_units: float | None  # units as independent draws (Gwet / irrCAC)
    ci_units: tuple[float, float] | None
    ci_reason: str = ""  # why ci is None while the value is defined
    ci_units_reason: str = ""


def fleiss_layout(counts: np.ndarray) -> FleissLayout:
    counts = np.asarray(counts)
    raters = np.unique(counts.sum(axis=1))
    return FleissLayout(tuple(int(r) for r in raters if r > 0), counts.shape[1])


def fleiss_cluster_statistics(counts: np.ndarray, codes: np.ndarray, clusters: int, layout: FleissLayout):
    """(clusters x layout.width) integer sums; every measure of a resample is a function of their sums."""
    counts = np.asarray(counts, dtype=np.int64)
    raters = counts.sum(axis=1)
    agreeing = (counts * (counts - 1)).sum(axis=1)
    columns = [np.ones(raters.size), raters >= 2]
    columns += [agreeing * (raters == r) for r in layout.paired]
    columns += [counts[:, k] * (raters == r) for r in layout.raters for k in range(layout.categories)]
    return np.stack([cluster_sums(column, codes, clusters) for column in columns], axis=1)


def fleiss_from_sums(sums: np.ndarray, layout: FleissLayout):
    """kappa, p_a, p_e for each row of summed statistics; kappa NaN where undefined."""
    sums = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    paired = sums[:, 1]  # column 0 counts units; the shares below need only the paired ones
    agreement = np.zeros(sums.shape[0])
    for j, r in enumerate(layout.paired):
        agreement = agreement + sums[:, 2 + j] / (r * (r - 1))
    pi = _category_shares(sums, layout)
    with np.errstate(invalid="ignore", divide="ignore"):
        pa = agreement / paired
        pe = np.sum(pi * pi, axis=1)
        defined = (paired > 0) & ((pi > 0).sum(axis=1) >= 2)
        kappa = np.where(defined, (pa - pe) / (1 - pe), np.nan)
    return kappa, pa, pe


def _category_shares(sums: np.ndarray, layout: FleissLayout) -> np.ndarray:
    """pi_k = (1/n) sum_i r_ik / r_i, one row per row of sums."""
    start = 2 + len(layout.paired)
    shares = np.zeros((sums.shape[0], layout.categories))
    for j, r in enumerate(layout.raters):
        shares = shares + sums[:, start + j * layout.categories : start + (j + 1) * layout.categories] / r
    with np.errstate(invalid="ignore", divide="ignore"):
        return shares / sums[:, :1]


def fleiss_kappa(counts: np.ndarray, clusters: np.ndarray | None = None, *, confidence: float = 0.95) -> FleissResult:
    """Fleiss' kappa of a (units x categories) count matrix; `clusters` labels each unit's clip."""
    counts = np.asarray(counts, dtype=np.int64)
    raters = counts.sum(axis=1)
    rated = raters > 0
    labels = np.arange(counts.shape[0]) if clusters is None else np.asarray(clusters)
    counts, raters, labels = counts[rated], raters[rated], labels[rated]
    codes, n_clusters = cluster_codes(labels)
    units, paired = int(counts.shape[0]), int((raters >= 2).sum())
    used = np.flatnonzero(counts.sum(axis=0) > 0)
    reason = ""
    if paired == 0:
        reason = "no unit has two or more ratings"
    elif used.size < 2:
        reason = f"every rating is in one category (category {int(used[0])}): chance agreement is 1, kappa is 0/0"
    if reason:
        return FleissResult(None, reason, None, None, units, paired, n_clusters, None, None, None, None)
    layout = fleiss_layout(counts)
    totals = fleiss_cluster_statistics(counts, codes, n_clusters, layout).sum(axis=0, keepdims=True)
    kappa, pa, pe = (float(x[0]) for x in fleiss_from_sums(totals, layout))
    pi = _category_shares(totals, layout)[0]
    deviations = _linearized(counts, raters, pi, kappa=kappa, pe=pe, paired=paired) - kappa
    se, se_units = linearized_se(deviations, codes, n_clusters)
    few_clusters, few_units = too_few(n_clusters, "clips"), too_few(units, "units")
    return FleissResult(
        kappa,
        "",
        pa,
        pe,
        units,
        paired,
        n_clusters,
        se,
        None if few_clusters else t_interval(kappa, se, n_clusters - 1, confidence=confidence),
        se_units,
        None if few_units else t_interval(kappa, se_units, units - 1, confidence=confidence),
        few_clusters or "",
        few_units or "",
    )


def _linearized(counts, raters, pi, *, kappa: float, pe: float, paired: int) -> np.ndarray:
    """Gwet's kappa*_i of every unit (module docstring)."""
    units = counts.shape[0]
    pairs = raters * (raters - 1)
    agreement = np.where(raters >= 2, (counts * (counts - 1)).sum(axis=1) / np.where(pairs > 0, pairs, 1), 0.0)
    kappa_i = (units / paired) * (agreement - pe * (raters >= 2)) / (1 - pe)
    pe_i = (counts * pi[None, :]).sum(axis=1) / raters
    return kappa_i - 2 * (1 - kappa) * (pe_i - pe) / (1 - pe)
