"""Cohen's kappa for two raters, any number of categories, unweighted or weighted; Light's kappa. Pure numpy.

Sources:
- Cohen, J. (1960). A coefficient of agreement for nominal scales. Educ. Psychol. Meas. 20, 37-46.
- Cohen, J. (1968). Weighted kappa: nominal scale agreement with provision for scaled disagreement
  or partial credit. Psychol. Bull. 70, 213-220.
- Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969). Large sample standard errors of kappa and
  weighted kappa. Psychol. Bull. 72, 323-327 (the standard error below; irrCAC's kappa2.table and
  statsmodels' cohens_kappa compute the same).
- Light, R. J. (1971). Measures of response agreement for qualitative data: some generalizations
  and alternatives. Psychol. Bull. 76, 365-377 (the mean of the pairwise kappas).

A table t (q x q counts; rows rater a, columns rater b) over the declared categories, in the order
of the scale -- never only the categories observed, so that 0 and 2 stay two steps apart when nobody
answered 1. Disagreement weights are integers D, agreement weights w = 1 - D / max D:

    unweighted  D_ij = [i != j]
    linear      D_ij = |i - j|      (Cicchetti & Allison 1971; scikit-learn weights="linear")
    quadratic   D_ij = (i - j)^2    (Fleiss & Cohen 1973; scikit-learn weights="quadratic")

    kappa_w = 1 - n sum_ij D_ij t_ij / sum_ij D_ij r_i c_j       (r, c: the margins of t; n = sum t)

in integers, one division at the end (for two categories it is the binary kappa of
evaluation.stats.cohen). Kappa is undefined (None, NaN in arrays) when the denominator is 0: both
raters put every unit in one and the same category, so the expected disagreement is 0 and kappa is
0/0 -- neither perfect agreement nor chance.

Standard error (Fleiss, Cohen & Everitt 1969, non-null), with p = t / n, p_o, p_e the weighted
observed and expected agreement:

    var = [sum_ij p_ij (w_ij - (wbar_i + wbar_j) (1 - kappa))^2 - (kappa - p_e (1 - kappa))^2] / (n (1 - p_e)^2)
    wbar_i = sum_j p_.j w_ij,   wbar_j = sum_i p_i. w_ij

95 % interval: kappa -/+ t(0.975, n - 1) se within [-1, 1] (irrCAC's rule), and a percentile
bootstrap over units -- or over clusters of units (the clips of a word-level table) when given.
Neither from fewer than evaluation.stats.intervals.MIN_UNITS units (or clusters): the reason instead.

Light's kappa: the plain mean of Cohen's kappa over every pair of raters that share a unit, each pair
on the units both rated (pairwise deletion, as psy::lkappa; irr::kappam.light deletes listwise,
which is the same on complete data). Pairs whose kappa is undefined are counted and left out.
"""

import math
from dataclasses import dataclass

import numpy as np

from evaluation.stats.blas import one_blas_thread
from evaluation.stats.intervals import CONFIDENCE, t_interval, too_few
from evaluation.stats.resampling import BootstrapInterval, bootstrap_sums, cluster_codes, percentile_interval

WEIGHTINGS = ("unweighted", "linear", "quadratic")
UNDEFINED = "both raters put every unit in one and the same category: expected disagreement is 0, kappa is 0/0"


@dataclass(frozen=True)
class PairKappa:
    value: float | None
    reason: str  # why value is None; empty when defined
    units: int  # units both raters rated
    se: float | None  # Fleiss, Cohen & Everitt (1969)
    ci: tuple[float, float] | None  # kappa -/+ t(0.975, units - 1) se
    ci_reason: str  # why ci is None while the value is defined
    bootstrap: BootstrapInterval | None  # percentile bootstrap over units (or their clusters)
    bootstrap_reason: str


@dataclass(frozen=True)
class LightsKappa:
    value: float | None
    reason: str
    pairs: int  # rater pairs sharing at least one unit
    pairs_undefined: int  # of those, pairs whose kappa is 0/0 (left out of the mean)


_TABLES_PER_BLOCK = 262_144


def disagreements(categories: int, weighting) -> np.ndarray:
    """The integer disagreement weights D (q x q) of a weighting named in WEIGHTINGS; or a q x q
    matrix of disagreement weights given as such (Cohen 1968's own example weights 1, 3 and 6)."""
    if not isinstance(weighting, str):
        d = np.asarray(weighting)
        if d.shape != (categories, categories) or np.any(d < 0) or np.any(np.diag(d) != 0):
            raise ValueError(
                f"disagreement weights must be a {categories} x {categories} matrix, >= 0, 0 on the diagonal"
            )
        return d
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}, not {weighting!r}")
    index = np.arange(categories)
    distance = np.abs(index[:, None] - index[None, :])
    return {"unweighted": (distance > 0).astype(np.int64), "linear": distance, "quadratic": distance**2}[weighting]


def agreement_weights(categories: int, weighting) -> np.ndarray:
    """w = 1 - D / max D (the identity for two categories, whatever the weighting)."""
    d = disagreements(categories, weighting)
    return 1.0 - d / (d.max() if d.max() > 0 else 1)


def table_kappas(tables: np.ndarray, weighting="unweighted") -> np.ndarray:
    """Kappa of each (q x q) count table of a (m x q x q) stack; NaN where undefined."""
    return table_kappas_by(tables, [weighting])[0]


def table_kappas_by(tables: np.ndarray, weightings) -> list[np.ndarray]:
    """table_kappas for several weightings at once, sharing the tables' margins.

    The sums are of integers in float64 (matrix products, on one BLAS thread: these are skinny
    products, which threads slow down): exact while they stay below 2^53, far beyond any table of
    words here, so the order BLAS adds them in does not matter."""
    tables = np.asarray(tables)
    q = tables.shape[-1]
    weightings = list(weightings)
    count = int(np.prod(tables.shape[:-2], dtype=np.int64))
    if count > _TABLES_PER_BLOCK:
        # A block of tables at a time: each table's kappa is its own (exact sums), so the blocks give
        # the same bits as one pass, without float copies of millions of tables at ten times MMEE's size.
        stack = tables.reshape(-1, q, q)
        blocks = [
            table_kappas_by(stack[start : start + _TABLES_PER_BLOCK], weightings)
            for start in range(0, count, _TABLES_PER_BLOCK)
        ]
        return [
            np.concatenate([block[k] for block in blocks]).reshape(tables.shape[:-2]) for k in range(len(weightings))
        ]
    flat = tables.reshape(-1, q * q).astype(np.float64)
    d = [disagreements(q, weighting).astype(np.float64) for weighting in weightings]
    cells = np.arange(q * q)
    to_rows = (cells[:, None] // q == np.arange(q)[None, :]).astype(np.float64)  # cell (i, j) -> i
    to_columns = (cells[:, None] % q == np.arange(q)[None, :]).astype(np.float64)  # cell (i, j) -> j
    with one_blas_thread():
        n = flat.sum(axis=1)
        rows, columns = flat @ to_rows, flat @ to_columns
        observed = flat @ np.stack([x.ravel() for x in d], axis=1)
        expected = [((rows @ x) * columns).sum(axis=1) for x in d]
    kappas = []
    for k, disagreement in enumerate(expected):
        kappa = np.full(n.shape, np.nan)
        defined = disagreement > 0
        kappa[defined] = (disagreement - n * observed[:, k])[defined] / disagreement[defined]
        kappas.append(kappa)
    return kappas


def fce_standard_error(table: np.ndarray, weighting="unweighted") -> float | None:
    """Fleiss, Cohen & Everitt's (1969) large-sample standard error; None when kappa is undefined."""
    table = np.asarray(table, dtype=np.float64)
    n = table.sum()
    kappa = float(table_kappas(table[None], weighting)[0])
    if n < 2 or math.isnan(kappa):
        return None
    w = agreement_weights(table.shape[0], weighting)
    p = table / n
    p_row, p_column = p.sum(axis=1), p.sum(axis=0)
    pe = float(p_row @ w @ p_column)
    w_row, w_column = w @ p_column, w.T @ p_row
    spread = (p * (w - (w_row[:, None] + w_column[None, :]) * (1 - kappa)) ** 2).sum()
    variance = (spread - (kappa - pe * (1 - kappa)) ** 2) / (n * (1 - pe) ** 2)
    return math.sqrt(max(float(variance), 0.0))


def contingency(a, b, categories) -> tuple[np.ndarray, np.ndarray]:
    """The q x q table of two raters' labels (None or NaN missing: the unit is left out), and the
    cell index of every unit both rated."""
    index = {value: k for k, value in enumerate(categories)}
    units: list[int] = []
    for x, y in zip(a, b, strict=True):
        if _missing(x) or _missing(y):
            continue
        if x not in index or y not in index:
            raise ValueError(f"a label is not one of the categories {list(categories)}: {x!r}, {y!r}")
        units.append(index[x] * len(categories) + index[y])
    cells = np.asarray(units, dtype=np.int64)
    q = len(categories)
    return np.bincount(cells, minlength=q * q).reshape(q, q), cells


def cohen_kappa(
    a,
    b,
    *,
    categories,
    weighting="unweighted",
    clusters=None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> PairKappa:
    """Cohen's kappa of two raters' labels (units in the same order; None or NaN where a rater gave
    none), with the FCE (1969) interval and a bootstrap over units, or over `clusters` (a label per
    unit, e.g. its clip) when given."""
    table, cells = contingency(a, b, categories)
    units = int(cells.size)
    if units == 0:
        return PairKappa(None, "no unit rated by both raters", 0, None, None, "", None, "")
    kappa = float(table_kappas(table[None], weighting)[0])
    if math.isnan(kappa):
        return PairKappa(None, UNDEFINED, units, None, None, "", None, "")
    se = fce_standard_error(table, weighting)
    few_units = too_few(units, "units")
    ci = None if few_units else t_interval(kappa, se, units - 1, confidence=confidence)
    boot, boot_reason = _bootstrap(
        cells, table.shape[0], _rated(clusters, a, b), weighting, resamples=resamples, seed=seed, confidence=confidence
    )
    return PairKappa(kappa, "", units, se, ci, few_units or "", boot, boot_reason)


def _bootstrap(cells, q, clusters, weighting, *, resamples, seed, confidence):
    labels = np.arange(cells.size) if clusters is None else np.asarray(clusters)
    codes, n_clusters = cluster_codes(labels)
    few = too_few(n_clusters, "units" if clusters is None else "clusters")
    if few or resamples == 0:
        return None, few or "no resamples asked for"
    per_cluster = np.zeros((n_clusters, q * q))
    np.add.at(per_cluster, (codes, cells), 1.0)
    sums = bootstrap_sums(per_cluster, resamples=resamples, seed=seed)
    interval = percentile_interval(
        table_kappas(sums.reshape(-1, q, q).round().astype(np.int64), weighting), confidence=confidence
    )
    return interval, "" if interval.low is not None else "fewer than two resamples where kappa is defined"


def _rated(clusters, a, b):
    """The cluster labels of the units both raters rated, in order."""
    if clusters is None:
        return None
    return [c for c, x, y in zip(clusters, a, b, strict=True) if not (_missing(x) or _missing(y))]


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def lights_kappa(matrix, *, categories, weighting="unweighted") -> LightsKappa:
    """Light's kappa of a raters x units matrix (None or NaN where a rater gave no label)."""
    matrix = np.asarray(matrix, dtype=object)
    q, tables = len(categories), []
    for i in range(matrix.shape[0]):
        for j in range(i + 1, matrix.shape[0]):
            table, cells = contingency(matrix[i], matrix[j], categories)
            if cells.size:
                tables.append(table)
    kappas = table_kappas(np.asarray(tables, dtype=np.int64).reshape(-1, q, q), weighting)
    return lights_mean(kappas)


def lights_mean(kappas: np.ndarray) -> LightsKappa:
    """The mean of the defined pairwise kappas (NaN undefined), with what was left out."""
    kappas = np.asarray(kappas, dtype=np.float64)
    pairs, defined = int(kappas.size), kappas[~np.isnan(kappas)]
    if pairs == 0:
        return LightsKappa(None, "no two raters rated a common unit", 0, 0)
    if defined.size == 0:
        reason = f"undefined for all {pairs} rater pairs: each put every unit it shares in one and the same category"
        return LightsKappa(None, reason + " (0/0)", pairs, pairs)
    return LightsKappa(math.fsum(defined.tolist()) / defined.size, "", pairs, pairs - int(defined.size))
