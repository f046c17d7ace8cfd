"""Clip bootstrap of Light's kappa (the mean over annotator pairs of Cohen's kappa, binary
collapse) from per-clip sufficient statistics. Pure numpy and scipy.

A resample draws C clips with replacement out of C (evaluation.stats.resampling, the same draws
as every other measure of the group). In the resampled data a clip drawn k times is k clips with
the same annotators, so a pair's table is the count-weighted sum of its per-clip tables, and the
pair counts once in the mean if any of its clips was drawn. Building those tables pair by pair
for every resample is what made the direct bootstrap too slow (about 400,000 pairs per resample
at MMEE's size). Kappa does not change when a table is scaled, which makes it cheap:

- **A pair that shares one clip** (about 80 % of the pairs at MMEE's size) has its table times
  the clip's count: its kappa is fixed, and it is in the mean exactly when its clip is drawn. Per
  clip, the sum of those pairs' kappas and their number are the clip's statistics, and a
  resample's part of the mean is (drawn clips) @ (per-clip sums), as for the other measures.
- **A pair that shares two clips** (most of the rest) has the kappa of i T1 + j T2 for its
  clips' counts i, j, which depends only on i : j. The counts of a bootstrap are small, so the
  kappas of every pair for each ratio that occurs are computed once and looked up.
- **A pair that shares three clips or more** has its 2 x 2 table summed over its clips with
  their counts: per cell, a sparse (pairs x clips) matrix times the counts, then kappa per pair.

The counts and the products in kappa are integers, exact in float64, and a division of exact
operands is correctly rounded, so a resample's pair kappas are the bits the point estimate's
formula gives on that resample's tables. A pair whose kappa is undefined (0/0: one label from
both on every shared word) is left out of the mean, as in the point estimate
(evaluation.stats.cohen); a resample without a defined pair gives NaN, which percentile_interval
leaves out.
"""

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from evaluation.stats.blas import one_blas_thread
from evaluation.stats.cohen import PairTables
from evaluation.stats.resampling import resample_counts

_RESAMPLES_PER_BLOCK = 32
_ROWS_PER_BLOCK = 262_144
_TWO_CLIP_CELLS = 2_000_000  # resamples x two-clip pairs per step
_EMPHASIZED = np.array([0, 1, 1])
# The 3 x 3 joint levels collapsed to the binary 2 x 2 cells (0,0), (0,1), (1,0), (1,1).
_TO_BINARY = np.zeros((9, 4))
for _i in range(3):
    for _j in range(3):
        _TO_BINARY[3 * _i + _j, 2 * _EMPHASIZED[_i] + _EMPHASIZED[_j]] = 1


@dataclass
class TwoClipPairs:
    """Pairs sharing exactly two clips: each clip's 2 x 2 table and code, and the pairs' kappas for
    each pair of counts (i, j) up to `base` - 1 (a column per ratio i : j, as kappa depends on no more;
    made on first use and grown when a resample draws a clip more often)."""

    first: np.ndarray  # (pairs, 4) cells on the first clip
    second: np.ndarray  # (pairs, 4) cells on the second clip
    first_clip: np.ndarray  # (pairs,) codes
    second_clip: np.ndarray
    base: int = 0
    column: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))  # i * base + j -> column
    columns: int = 0
    kappa: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (pairs * columns,) 0 where undefined
    defined: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))  # 1 where defined

    def lookup(self, base: int) -> None:
        """Make the columns for every count pair below `base`."""
        if base <= self.base:
            return
        # A clip's count in a resample is about Poisson(1): the likeliest ratios come first, so that
        # the columns a resample mostly reads share a cache line.
        likelihood: dict[tuple[int, int], float] = {}
        for i in range(base):
            for j in range(base):
                likelihood[_ratio(i, j)] = likelihood.get(_ratio(i, j), 0.0) + 1 / (
                    math.factorial(i) * math.factorial(j)
                )
        ratios = sorted(likelihood, key=lambda ratio: -likelihood[ratio])
        index = {ratio: k for k, ratio in enumerate(ratios)}
        column = np.array([index[_ratio(i, j)] for i in range(base) for j in range(base)], dtype=np.int32)
        # pairs x columns, so that the columns of one pair sit together in memory
        # Filled column by column, never as a list of columns stacked: the table is the largest array
        # of the bootstrap at ten times MMEE's size, and a second copy of it was the report's peak.
        self.kappa, self.defined = np.empty(0), np.empty(0, dtype=np.int8)  # the old table goes first
        kappa = np.empty((self.first.shape[0], len(ratios)))
        defined = np.empty((self.first.shape[0], len(ratios)), dtype=np.int8)
        for k, (i, j) in enumerate(ratios):
            values = _kappas(*(i * self.first + j * self.second).T)
            defined[:, k] = ~np.isnan(values)
            kappa[:, k] = np.nan_to_num(values, nan=0.0)
        self.base, self.column, self.columns = base, column, len(ratios)
        self.kappa, self.defined = kappa.ravel(), defined.ravel()


def _ratio(i: int, j: int) -> tuple[int, int]:
    g = math.gcd(i, j)
    return (i // g, j // g) if g else (0, 0)


@dataclass(frozen=True)
class ClipPairStatistics:
    """What the bootstrap needs of a group's annotator pairs, by the group's clip codes."""

    clips: int
    single_sum: np.ndarray  # (clips,) sum of the kappas of the defined one-clip pairs of each clip
    single_count: np.ndarray  # (clips,) how many such pairs
    two: TwoClipPairs
    several: list[sparse.csr_matrix]  # four (pairs x clips) matrices, one per binary cell


def clip_pair_statistics(tables: PairTables, clip_labels: np.ndarray) -> ClipPairStatistics:
    """Per-clip statistics of the pairs on the clips `clip_labels` (sorted clip indexes: the
    group's clusters, numbered as cluster_codes numbers them)."""
    clip_labels = np.asarray(clip_labels, dtype=np.int64)
    rows = np.flatnonzero(np.isin(tables.clip, clip_labels) & (tables.joint.reshape(-1, 9).sum(axis=1) > 0))
    a, b = tables.a[rows], tables.b[rows]
    cells = _binary_cells(tables.joint, rows)
    code = np.searchsorted(clip_labels, tables.clip[rows])
    # Rows of one annotator pair are contiguous (clip_pair_tables sorts them so).
    new_pair = np.concatenate([[True], (np.diff(a) != 0) | (np.diff(b) != 0)]) if a.size else np.zeros(0, bool)
    starts = np.flatnonzero(new_pair)
    sizes = np.diff(np.append(starts, a.size))
    n = clip_labels.size

    single = starts[sizes == 1]
    kappas = _kappas(*cells[single].T)
    defined = ~np.isnan(kappas)
    single_sum = np.bincount(code[single][defined], weights=kappas[defined], minlength=n)
    single_count = np.bincount(code[single][defined], minlength=n).astype(np.float64)

    pairs = starts[sizes == 2]
    two = TwoClipPairs(cells[pairs], cells[pairs + 1], code[pairs], code[pairs + 1])

    several_rows = np.repeat(sizes > 2, sizes)
    pair_of_row = np.repeat(np.arange(starts.size), sizes)[several_rows]
    _, pair_index = np.unique(pair_of_row, return_inverse=True)
    shape = (int(pair_index.max()) + 1 if pair_index.size else 0, n)
    several = [
        sparse.csr_matrix((cells[several_rows, k], (pair_index, code[several_rows])), shape=shape) for k in range(4)
    ]
    return ClipPairStatistics(n, single_sum, single_count, two, several)


def _binary_cells(joint: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(rows, 4) cells (0,0), (0,1), (1,0), (1,1) of the binary collapse of the 3 x 3 tables `joint[rows]`,
    a block of rows at a time: the whole (rows x 9) table in float64 would be the largest array of
    a report at ten times MMEE's size. Integer sums, so the same numbers as a product with _TO_BINARY."""
    cells = np.empty((rows.size, 4))
    for start in range(0, rows.size, _ROWS_PER_BLOCK):
        block = joint[rows[start : start + _ROWS_PER_BLOCK]].reshape(-1, 9).astype(np.int64)
        cells[start : start + block.shape[0]] = block @ _TO_BINARY.astype(np.int64)
    return cells


def light_kappa_resampled(statistics: ClipPairStatistics, *, resamples: int, seed: int) -> np.ndarray:
    """(resamples,) Light's kappa of each resample; NaN where no pair's kappa is defined."""
    values = np.full(resamples, np.nan)
    pending, first = [], 0
    with one_blas_thread():
        for start, counts in resample_counts(clips=statistics.clips, resamples=resamples, seed=seed):
            # The draws come a few resamples at a time; a block of them shares each product.
            pending.append(counts)
            if sum(block.shape[0] for block in pending) >= _RESAMPLES_PER_BLOCK or start + counts.shape[0] == resamples:
                block = np.concatenate(pending)
                values[first : first + block.shape[0]] = light_kappa_of_counts(statistics, block)
                pending, first = [], first + block.shape[0]
    return values


def light_kappa_of_counts(statistics: ClipPairStatistics, counts: np.ndarray) -> np.ndarray:
    """Light's kappa for each row of `counts` (resamples x clips: how often each clip is drawn)."""
    drawn = (counts > 0).astype(np.float64)
    total = drawn @ statistics.single_sum
    pairs = drawn @ statistics.single_count
    two = _two_clip_sums(statistics.two, counts)
    if two is not None:
        total += two[0]
        pairs += two[1]
    several = _several_clip_kappas(statistics.several, counts)
    if several is not None:
        defined = ~np.isnan(several)
        total += np.where(defined, several, 0.0).sum(axis=1)
        pairs += defined.sum(axis=1)
    values = np.full(counts.shape[0], np.nan)
    np.divide(total, pairs, out=values, where=pairs > 0)
    return values


def _two_clip_sums(two: TwoClipPairs, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Per resample: the sum of the defined kappas of the two-clip pairs, and how many are defined,
    looked up by their clips' counts. A few resamples at a time, so that the (resamples x pairs)
    arrays stay small at ten times MMEE's size; each resample's sum is over its own row, in pair
    order, whatever the step."""
    pairs = two.first_clip.size
    if pairs == 0:
        return None
    two.lookup(max(int(counts.max()) + 1, 8))
    totals, defined = np.zeros(counts.shape[0]), np.zeros(counts.shape[0], dtype=np.int64)
    offsets = np.arange(0, pairs * two.columns, two.columns, dtype=np.int32)
    step = max(1, _TWO_CLIP_CELLS // pairs)
    for start in range(0, counts.shape[0], step):
        small = counts[start : start + step].astype(np.int32)
        combination = small[:, two.first_clip] * two.base + small[:, two.second_clip]
        cells = two.column[combination] + offsets
        totals[start : start + small.shape[0]] = two.kappa.take(cells).sum(axis=1)
        defined[start : start + small.shape[0]] = two.defined.take(cells).sum(axis=1, dtype=np.int64)
    return totals, defined


def _several_clip_kappas(several: list[sparse.csr_matrix], counts: np.ndarray) -> np.ndarray | None:
    """(resamples x pairs) kappas of the pairs sharing three clips or more, from their summed tables."""
    if several[0].shape[0] == 0:
        return None
    weights = counts.T.astype(np.float64)  # clips x resamples
    return _kappas(*[(matrix @ weights).T for matrix in several])


def _kappas(n00, n01, n10, n11) -> np.ndarray:
    """Cohen's kappa of 2 x 2 tables, cell by cell; NaN for 0/0 and for an empty table (a pair none
    of whose clips was drawn). The formula of the point estimate (evaluation.stats.kappa:
    (expected - n * observed disagreement) / expected) on integer counts."""
    n00, n01, n10, n11 = (np.asarray(cell, dtype=np.float64) for cell in (n00, n01, n10, n11))
    first_not, first_yes = n00 + n01, n10 + n11  # the first annotator's margins
    expected = first_not * (n01 + n11) + first_yes * (n00 + n10)
    observed = (n01 + n10) * (first_not + first_yes)
    kappa = np.full(expected.shape, np.nan)
    np.divide(expected - observed, expected, out=kappa, where=expected > 0)
    return kappa
