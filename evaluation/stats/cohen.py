"""Average pairwise Cohen's kappa on the binary collapse (level 1 or 2 = emphasized). Pure numpy.

For every pair of annotators who labelled at least one common word, Cohen's (unweighted, two
categories) kappa is computed on the words both labelled; the reported value is the plain mean
over those pairs, every pair counting once however many words it shares. The mean weighted by
shared words is given beside it.

A pair's kappa is undefined when its expected agreement is 1 (both gave one and the same label to
every shared word: 0/0); such pairs are counted and left out of the mean, as scikit-learn's
cohen_kappa_score answers NaN for them.

The 2x2 tables are built without loops over words: every pair of annotations of the same clip is
one row of counts (shared words, words each marked, words both marked), and rows are summed per
annotator pair in one sorted pass.
"""

import math
from dataclasses import dataclass

import numpy as np

from evaluation.stats.ratings import Ratings

WEIGHTING = "unweighted Cohen's kappa (two categories); unweighted mean over annotator pairs"
_PAIRS_PER_CHUNK = 200_000


@dataclass(frozen=True)
class PairTables:
    """One row per pair of annotations of the same clip; annotator a < annotator b."""

    clip: np.ndarray
    a: np.ndarray
    b: np.ndarray
    shared: np.ndarray  # words both labelled
    a_marked: np.ndarray  # of those, words a marked
    b_marked: np.ndarray
    both_marked: np.ndarray
    n_annotators: int


@dataclass(frozen=True)
class CohenResult:
    value: float | None
    reason: str  # why value is None; empty when defined
    pairs: int  # annotator pairs sharing at least one word
    pairs_undefined: int  # of those, pairs whose kappa is 0/0 (left out of the mean)
    mean_weighted_by_words: float | None


def clip_pair_tables(ratings: Ratings) -> PairTables:
    clip, annotator = ratings.clip, ratings.annotator
    sizes = np.bincount(clip, minlength=ratings.n_clips)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    first, second = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]
    for size in np.unique(sizes[sizes >= 2]):
        base = starts[sizes == size][:, None]
        i, j = np.triu_indices(int(size), k=1)
        first.append((base + i).ravel())
        second.append((base + j).ravel())
    first_rows, second_rows = np.concatenate(first), np.concatenate(second)
    present, marked = ratings.levels >= 0, ratings.levels >= 1
    counts = np.zeros((4, first_rows.size), dtype=np.int64)
    for start in range(0, first_rows.size, _PAIRS_PER_CHUNK):
        i, j = first_rows[start : start + _PAIRS_PER_CHUNK], second_rows[start : start + _PAIRS_PER_CHUNK]
        chunk = slice(start, start + i.size)
        counts[0, chunk] = (present[i] & present[j]).sum(axis=1)
        counts[1, chunk] = (marked[i] & present[j]).sum(axis=1)
        counts[2, chunk] = (present[i] & marked[j]).sum(axis=1)
        counts[3, chunk] = (marked[i] & marked[j]).sum(axis=1)
    a, b = annotator[first_rows], annotator[second_rows]
    order = np.lexsort((clip[first_rows], b, a))  # rows of one annotator pair are contiguous
    return PairTables(clip[first_rows][order], a[order], b[order], *counts[:, order], ratings.n_annotators)


def pair_kappas(tables: PairTables, clips: np.ndarray | None = None):
    """Per annotator pair (on `clips`, a bool mask over clips, or all): a, b, shared words, kappa (NaN if 0/0)."""
    rows = np.ones(tables.clip.size, dtype=bool) if clips is None else np.asarray(clips)[tables.clip]
    a, b = tables.a[rows], tables.b[rows]
    if a.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, np.empty(0)
    starts = np.flatnonzero(np.concatenate([[True], (np.diff(a) != 0) | (np.diff(b) != 0)]))
    n, sa, sb, both = (
        np.add.reduceat(column[rows], starts)
        for column in (tables.shared, tables.a_marked, tables.b_marked, tables.both_marked)
    )
    shares = n > 0
    pair_a, pair_b = a[starts][shares], b[starts][shares]
    n, sa, sb, both = n[shares], sa[shares], sb[shares], both[shares]
    # Exact in integers: kappa = (n*agree - E) / (n^2 - E), E = sa*sb + (n-sa)*(n-sb).
    agree = n - sa - sb + 2 * both
    expected = sa * sb + (n - sa) * (n - sb)
    denominator = n * n - expected
    defined = denominator > 0
    kappa = np.full(n.size, np.nan)
    kappa[defined] = (n * agree - expected)[defined] / denominator[defined]
    return pair_a, pair_b, n, kappa


def average_pairwise_kappa(tables: PairTables, clips: np.ndarray | None = None) -> CohenResult:
    _, _, shared, kappa = pair_kappas(tables, clips)
    defined = ~np.isnan(kappa)
    pairs, used = int(kappa.size), int(defined.sum())
    if pairs == 0:
        return CohenResult(None, "no two annotators labelled a common word", 0, 0, None)
    if used == 0:
        reason = (
            f"undefined for all {pairs} annotator pairs: each pair gave one and the same label to every "
            "word it shares, so chance agreement is 1 (0/0)"
        )
        return CohenResult(None, reason, pairs, pairs, None)
    values, words = kappa[defined], shared[defined]
    mean = math.fsum(values.tolist()) / used
    weighted = math.fsum((values * words).tolist()) / int(words.sum())
    return CohenResult(mean, "", pairs, pairs - used, weighted)
