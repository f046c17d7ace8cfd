"""Average pairwise Cohen's kappa (Light's kappa) over the annotators of a study. Pure numpy.

For every pair of annotators who labelled at least one common word, Cohen's kappa is computed on
the words both labelled; the reported value is the plain mean over those pairs, every pair counting
once however many words it shares (Light 1971, with pairwise deletion). The mean weighted by shared
words is given beside it. Two versions:
- the binary collapse (level 1 or 2 = emphasized): unweighted kappa on two categories, the MMEE
  paper's "average pairwise Cohen's kappa";
- the three levels 0, 1, 2, unweighted, linear or quadratic weighted (evaluation.stats.kappa;
  Cohen 1968): the levels are ordered, so a 1 against a 2 is a smaller disagreement than a 0
  against a 2.

A pair's kappa is undefined when its expected disagreement is 0 (both gave one and the same label
to every shared word: 0/0); such pairs are counted and left out of the mean, as scikit-learn's
cohen_kappa_score answers NaN for them.

The tables are built without loops over words: every pair of annotations of the same clip is one
row of a 3 x 3 joint count of levels on the words both labelled, and rows are summed per annotator
pair in one sorted pass.
"""

from dataclasses import dataclass

import numpy as np

from evaluation.stats.aggregation import LEVELS
from evaluation.stats.kappa import table_kappas_by
from evaluation.stats.ratings import Ratings

WEIGHTING = "unweighted Cohen's kappa (two categories); unweighted mean over annotator pairs"
_PAIRS_PER_CHUNK = 200_000
_EMPHASIZED = np.array([0, 1, 1])  # level -> not emphasized / emphasized
BINARY_DISAGREEMENT = (_EMPHASIZED[:, None] != _EMPHASIZED[None, :]).astype(np.int64)


@dataclass(frozen=True)
class PairTables:
    """One row per pair of annotations of the same clip; annotator a < annotator b."""

    clip: np.ndarray
    a: np.ndarray
    b: np.ndarray
    joint: np.ndarray  # (rows, 3, 3): words both labelled, by a's level (row) and b's level (column)
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
    a, b = annotator[first_rows], annotator[second_rows]
    order = np.lexsort((clip[first_rows], b, a))  # rows of one annotator pair are contiguous
    # Sorted before the tables are counted, chunk by chunk from the int8 levels: at ten times MMEE's
    # size a copy of the tables, or of the levels in int64, would be a few hundred MB more at the peak.
    first_rows, second_rows, a, b = first_rows[order], second_rows[order], a[order], b[order]
    del order
    joint = np.zeros((first_rows.size, LEVELS * LEVELS), dtype=np.int32)  # at most the words of a clip
    for start in range(0, first_rows.size, _PAIRS_PER_CHUNK):
        i, j = first_rows[start : start + _PAIRS_PER_CHUNK], second_rows[start : start + _PAIRS_PER_CHUNK]
        joint[start : start + i.size] = _joint_counts(
            ratings.levels[i].astype(np.int64), ratings.levels[j].astype(np.int64)
        )
    return PairTables(clip[first_rows], a, b, joint.reshape(-1, LEVELS, LEVELS), ratings.n_annotators)


def _joint_counts(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """(rows x 9) counts of (level of first, level of second) over the words both labelled."""
    cells = np.where((first >= 0) & (second >= 0), first * LEVELS + second, LEVELS * LEVELS)
    cells += np.arange(first.shape[0])[:, None] * (LEVELS * LEVELS + 1)
    counts = np.bincount(cells.ravel(), minlength=first.shape[0] * (LEVELS * LEVELS + 1))
    return counts.reshape(first.shape[0], LEVELS * LEVELS + 1)[:, : LEVELS * LEVELS]


def annotator_pair_tables(tables: PairTables, clips: np.ndarray | None = None):
    """Per annotator pair sharing a word (on `clips`, a bool mask over clips, or all): a, b, joint (3 x 3)."""
    rows = np.ones(tables.clip.size, dtype=bool) if clips is None else np.asarray(clips)[tables.clip]
    if rows.all():
        a, b, joint = tables.a, tables.b, tables.joint
    else:
        a, b, joint = tables.a[rows], tables.b[rows], tables.joint[rows]
    if a.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, np.zeros((0, LEVELS, LEVELS), dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], (np.diff(a) != 0) | (np.diff(b) != 0)]))
    summed = np.add.reduceat(joint, starts, axis=0, dtype=np.int64)
    shares = summed.reshape(-1, LEVELS * LEVELS).sum(axis=1) > 0
    if shares.all():  # the usual case: no second copy of the summed tables
        return a[starts], b[starts], summed
    return a[starts][shares], b[starts][shares], summed[shares]


def pair_kappas(tables: PairTables, clips: np.ndarray | None = None, weighting: str | None = None):
    """Per annotator pair: a, b, shared words, kappa (NaN if 0/0). weighting None is the binary
    collapse; "unweighted", "linear" or "quadratic" use the three levels."""
    a, b, joint = annotator_pair_tables(tables, clips)
    return a, b, joint.reshape(-1, LEVELS * LEVELS).sum(axis=1), table_kappas_by(joint, [_matrix(weighting)])[0]


def _matrix(weighting: str | None):
    """The binary collapse is the 3-level table with disagreement only between 0 and 1 or 2."""
    return BINARY_DISAGREEMENT if weighting is None else weighting


def average_pairwise_kappa(
    tables: PairTables, clips: np.ndarray | None = None, weighting: str | None = None
) -> CohenResult:
    _, _, shared, kappa = pair_kappas(tables, clips, weighting)
    return mean_over_pairs(shared, kappa)


def average_pairwise_kappas(tables: PairTables, clips: np.ndarray | None, weightings) -> dict:
    """average_pairwise_kappa for several weightings (None: the binary collapse), summing the tables once."""
    weightings = list(weightings)
    _, _, joint = annotator_pair_tables(tables, clips)
    shared = joint.reshape(-1, LEVELS * LEVELS).sum(axis=1)
    kappas = table_kappas_by(joint, [_matrix(weighting) for weighting in weightings])
    return {weighting: mean_over_pairs(shared, kappa) for weighting, kappa in zip(weightings, kappas)}


def mean_over_pairs(shared: np.ndarray, kappa: np.ndarray) -> CohenResult:
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
    # Pairs come in one canonical order (by annotator indexes), so numpy's sums are reproducible.
    mean = float(np.sum(values)) / used
    weighted = float(np.sum(values * words)) / int(words.sum())
    return CohenResult(mean, "", pairs, pairs - used, weighted)
