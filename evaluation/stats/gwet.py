"""Gwet's AC1 (unweighted) and AC2 (weighted) agreement coefficients, any number of raters per unit,
with their linearized standard errors. Pure numpy.

Sources: Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the presence of
high agreement. Br. J. Math. Stat. Psychol. 61, 29-48; Gwet, Handbook of Inter-Rater Reliability
(4th ed., 2014), ch. 2-5; irrCAC (R, K. Gwet), gwet.ac1.raw / gwet.ac1.dist, whose formulas these are.

Why it is here: when almost every word is "not emphasized", Fleiss' kappa and Krippendorff's alpha
can be low although raters agree on nearly every word (the prevalence paradox: their chance
agreement p_e is near 1). AC1's chance agreement is near 0 then, so it stays near the observed
agreement. Report it beside, never instead of, Fleiss.

With n units rated at least once, r_i ratings of unit i, r_ik of them in category k, q declared
categories and agreement weights w (identity for AC1; see evaluation.stats.kappa for linear and
quadratic), r*_ik = sum_l w_kl r_il:

    p_a   = mean over the n2 units with r_i >= 2 of  sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))
    pi_k  = (1/n) sum_i r_ik / r_i
    p_e   = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k),   T_w = sum_kl w_kl   (T_w = q for AC1)
    AC    = (p_a - p_e) / (1 - p_e)

Weights are 1 - D / max D with integer D, so the per-unit agreement is kept as the integer
max D (r_i^2 - r_i) - sum_kl D_kl r_ik r_il, summed per number of ratings r (evaluation.stats.fleiss's
layout): a clip bootstrap is an exact sum of per-clip integers (evaluation.stats.resampling).

Undefined (null with the reason, never 1): no unit with two ratings; every rating in one category
(irrCAC would answer AC = 1 there -- p_a = 1, p_e = 0 -- which says nothing about the raters, so the
platform's rule for such data holds: undefined).

Standard error: Gwet's linearization, per unit
    ac_i  = (n / n2) (p_a,i - p_e [r_i >= 2]) / (1 - p_e),  p_a,i = sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))
    p_e,i = T_w / (q (q - 1)) * sum_k r_ik (1 - pi_k) / r_i
    ac*_i = ac_i - 2 (1 - AC) (p_e,i - p_e) / (1 - p_e)
then evaluation.stats.intervals.linearized_se: units independent (irrCAC's) and clips as clusters.
"""

from dataclasses import dataclass

import numpy as np

from evaluation.stats.intervals import CONFIDENCE, linearized_se, t_interval, too_few
from evaluation.stats.kappa import disagreements
from evaluation.stats.resampling import cluster_codes, cluster_sums


@dataclass(frozen=True)
class GwetLayout:
    """Columns of the per-cluster statistics: units, paired units, agreement per r >= 2, then counts
    per category per r (the number of ratings of a unit)."""

    raters: tuple[int, ...]
    categories: int
    weighting: str

    @property
    def paired(self) -> tuple[int, ...]:
        return tuple(r for r in self.raters if r >= 2)

    @property
    def width(self) -> int:
        return 2 + len(self.paired) + len(self.raters) * self.categories

    @property
    def disagreement(self) -> np.ndarray:
        return disagreements(self.categories, self.weighting)

    @property
    def scale(self) -> int:
        return max(int(self.disagreement.max()), 1)

    @property
    def chance_factor(self) -> float:
        """T_w / (q (q - 1))."""
        q = self.categories
        total = float((1.0 - self.disagreement / self.scale).sum())
        return total / (q * (q - 1)) if q > 1 else 0.0


@dataclass(frozen=True)
class GwetResult:
    value: float | None
    reason: str
    pa: float | None
    pe: float | None
    units: int
    units_paired: int
    clusters: int
    se: float | None  # clusters (clips) drawn
    ci: tuple[float, float] | None
    se_units: float | None  # units independent (irrCAC)
    ci_units: tuple[float, float] | None
    ci_reason: str = ""
    ci_units_reason: str = ""


def gwet_layout(counts: np.ndarray, weighting: str = "unweighted") -> GwetLayout:
    counts = np.asarray(counts)
    raters = np.unique(counts.sum(axis=1))
    return GwetLayout(tuple(int(r) for r in raters if r > 0), counts.shape[1], weighting)


def unit_agreement(counts: np.ndarray, layout: GwetLayout) -> np.ndarray:
    """Per unit, max D * sum_k r_ik (r*_ik - 1), an integer."""
    counts = np.asarray(counts, dtype=np.int64)
    raters = counts.sum(axis=1)
    spread = ((counts @ layout.disagreement) * counts).sum(axis=1)
    return layout.scale * (raters * raters - raters) - spread


def gwet_cluster_statistics(counts: np.ndarray, codes: np.ndarray, clusters: int, layout: GwetLayout):
    """(clusters x layout.width) integer sums; every coefficient of a resample is a function of their sums."""
    counts = np.asarray(counts, dtype=np.int64)
    raters = counts.sum(axis=1)
    agreement = unit_agreement(counts, layout)
    columns = [np.ones(raters.size), raters >= 2]
    columns += [agreement * (raters == r) for r in layout.paired]
    columns += [counts[:, k] * (raters == r) for r in layout.raters for k in range(layout.categories)]
    return np.stack([cluster_sums(column, codes, clusters) for column in columns], axis=1)


def gwet_from_sums(sums: np.ndarray, layout: GwetLayout):
    """AC, p_a, p_e for each row of summed statistics; AC NaN where undefined."""
    sums = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    agreement = np.zeros(sums.shape[0])
    for j, r in enumerate(layout.paired):
        agreement = agreement + sums[:, 2 + j] / (layout.scale * r * (r - 1))
    pi = _category_shares(sums, layout)
    with np.errstate(invalid="ignore", divide="ignore"):
        pa = agreement / sums[:, 1]
        pe = layout.chance_factor * np.sum(pi * (1 - pi), axis=1)
        defined = (sums[:, 1] > 0) & ((pi > 0).sum(axis=1) >= 2) & (pe < 1)
        ac = np.where(defined, (pa - pe) / (1 - pe), np.nan)
    return ac, pa, pe


def _category_shares(sums: np.ndarray, layout: GwetLayout) -> np.ndarray:
    start = 2 + len(layout.paired)
    q = layout.categories
    shares = np.zeros((sums.shape[0], q))
    for j, r in enumerate(layout.raters):
        shares = shares + sums[:, start + j * q : start + (j + 1) * q] / r
    with np.errstate(invalid="ignore", divide="ignore"):
        return shares / sums[:, :1]


def gwet_ac(
    counts: np.ndarray,
    clusters: np.ndarray | None = None,
    *,
    weighting: str = "unweighted",
    confidence: float = CONFIDENCE,
) -> GwetResult:
    """AC1 (weighting "unweighted") or AC2 of a (units x categories) count matrix over the declared
    categories; `clusters` labels each unit's clip."""
    counts = np.asarray(counts, dtype=np.int64)
    raters = counts.sum(axis=1)
    rated = raters > 0
    labels = np.arange(counts.shape[0]) if clusters is None else np.asarray(clusters)
    counts, raters, labels = counts[rated], raters[rated], labels[rated]
    codes, n_clusters = cluster_codes(labels)
    units, paired = int(counts.shape[0]), int((raters >= 2).sum())
    reason = _undefined(counts, paired)
    if reason:
        return GwetResult(None, reason, None, None, units, paired, n_clusters, None, None, None, None)
    layout = gwet_layout(counts, weighting)
    totals = gwet_cluster_statistics(counts, codes, n_clusters, layout).sum(axis=0, keepdims=True)
    ac, pa, pe = (float(x[0]) for x in gwet_from_sums(totals, layout))
    pi = _category_shares(totals, layout)[0]
    deviations = _linearized(counts, raters, pi, layout, ac=ac, pe=pe, paired=paired) - ac
    se, se_units = linearized_se(deviations, codes, n_clusters)
    few_clusters, few_units = too_few(n_clusters, "clips"), too_few(units, "units")
    return GwetResult(
        ac,
        "",
        pa,
        pe,
        units,
        paired,
        n_clusters,
        se,
        None if few_clusters else t_interval(ac, se, n_clusters - 1, confidence=confidence),
        se_units,
        None if few_units else t_interval(ac, se_units, units - 1, confidence=confidence),
        few_clusters or "",
        few_units or "",
    )


def _undefined(counts: np.ndarray, paired: int) -> str:
    if paired == 0:
        return "no unit has two or more ratings"
    used = np.flatnonzero(counts.sum(axis=0) > 0)
    if used.size < 2:
        return (
            f"every rating is in one category (category {int(used[0])}): AC would be 1 by construction "
            "(p_a = 1, p_e = 0), which says nothing about the raters"
        )
    return ""


def _linearized(counts, raters, pi, layout: GwetLayout, *, ac: float, pe: float, paired: int) -> np.ndarray:
    """Gwet's ac*_i of every unit (module docstring)."""
    units = counts.shape[0]
    pairs = raters * (raters - 1)
    agreement = unit_agreement(counts, layout) / layout.scale
    pa_i = np.where(raters >= 2, agreement / np.where(pairs > 0, pairs, 1), 0.0)
    ac_i = (units / paired) * (pa_i - pe * (raters >= 2)) / (1 - pe)
    pe_i = layout.chance_factor * (counts * (1 - pi)[None, :]).sum(axis=1) / raters
    return ac_i - 2 * (1 - ac) * (pe_i - pe) / (1 - pe)
