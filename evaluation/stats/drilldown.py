"""The agreement report's drill-down: per clip, per word position, per word and per annotator pair.
Pure numpy, no Django.

Everything is computed at once for every group from the (units x 3) level counts the pooled
agreement uses, by the same per-cluster sums as the bootstrap (evaluation.stats.fleiss and
evaluation.stats.alpha): a "cluster" is here a clip, a word position or a word, so each row of the
sums is one clip's (position's, word's) statistics, and Fleiss' kappa and Krippendorff's alpha of
every row come out of one vectorised pass -- no loop over clips.

- Fleiss' kappa (binary collapse, as the report's) of a clip is undefined (0/0) when every rating
  of the clip is in one category, which is common (nobody marked anything): the observed agreement
  p_a is given beside it, and `agreement` is kappa where defined, else p_a (with which one it is).
- Krippendorff's alpha on the three levels with the ordinal metric (the report's headline alpha).
- A word is contested when between 40 % and 60 % of its annotators (both included) marked it
  (level 1 or 2); a clip's contested share is over its words with two ratings or more.
- Annotator pairs: the 3 x 3 table of levels (a's level by row, b's by column) summed over the
  words both labelled, for the pairs that share the most clips.
"""

from dataclasses import dataclass

import numpy as np

from evaluation.stats.alpha import alpha_cluster_statistics, alpha_from_sums, alpha_layout
from evaluation.stats.cohen import BINARY_DISAGREEMENT, PairTables
from evaluation.stats.fleiss import fleiss_cluster_statistics, fleiss_from_sums, fleiss_layout
from evaluation.stats.kappa import table_kappas_by
from evaluation.stats.ratings import binary_counts

CONTESTED_LOW, CONTESTED_HIGH = 2, 3  # fifths: 40 % and 60 % of a word's annotators
ALPHA_METRIC = "ordinal"
_PUNCTUATION = (
    "\"'.,;:!?()[]{}\u00ab\u00bb\u201c\u201d\u2018\u2019\u00bf\u00a1-\u2013\u2014\u2026\u3002\uff0c\uff1f\uff01"
)


@dataclass(frozen=True)
class GroupAgreement:
    """One value per group (clip, position or word); NaN where undefined."""

    words: np.ndarray  # rated words (units with at least one rating)
    judgements: np.ndarray  # ratings given
    marked: np.ndarray  # ratings at level 1 or 2
    kappa: np.ndarray  # Fleiss' kappa, binary collapse
    observed: np.ndarray  # p_a: observed agreement over words with two ratings or more
    alpha: np.ndarray  # Krippendorff's alpha, ordinal, on the levels
    contested: np.ndarray  # contested words among those with two ratings or more

    @property
    def agreement(self) -> np.ndarray:
        """Kappa where defined, else the observed agreement (see `kappa_defined`)."""
        return np.where(np.isnan(self.kappa), self.observed, self.kappa)

    @property
    def kappa_defined(self) -> np.ndarray:
        return ~np.isnan(self.kappa)

    @property
    def marked_share(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.marked / self.judgements


def group_agreement(counts: np.ndarray, codes: np.ndarray, groups: int) -> GroupAgreement:
    """Agreement of each group of units: `codes` (units,) numbers each unit's group 0..groups-1."""
    counts = np.asarray(counts, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    binary = binary_counts(counts)
    raters = counts.sum(axis=1)
    paired = raters >= 2
    contested = paired & (5 * binary[:, 1] >= CONTESTED_LOW * raters) & (5 * binary[:, 1] <= CONTESTED_HIGH * raters)
    fleiss = fleiss_layout(binary)
    kappa, observed, _ = fleiss_from_sums(fleiss_cluster_statistics(binary, codes, groups, fleiss), fleiss)
    layout = alpha_layout(counts)
    alpha = alpha_from_sums(alpha_cluster_statistics(counts, codes, groups, layout), layout, ALPHA_METRIC)
    paired_words = np.bincount(codes, weights=paired, minlength=groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        contested_share = np.bincount(codes, weights=contested, minlength=groups) / paired_words
        observed = np.where(paired_words > 0, observed, np.nan)
    return GroupAgreement(
        words=np.bincount(codes, weights=raters > 0, minlength=groups).astype(np.int64),
        judgements=np.bincount(codes, weights=raters, minlength=groups).astype(np.int64),
        marked=np.bincount(codes, weights=binary[:, 1], minlength=groups).astype(np.int64),
        kappa=kappa,
        observed=observed,
        alpha=alpha,
        contested=contested_share,
    )


def lowest_first(agreement: np.ndarray, alpha: np.ndarray, keys) -> np.ndarray:
    """The order of the groups from the lowest agreement up (ties: lower alpha, then key); groups
    without a value last."""
    keys = np.asarray(keys, dtype=object)
    key_rank = np.argsort(keys.astype(str), kind="stable").argsort()
    undefined = np.isnan(agreement)
    return np.lexsort((key_rank, np.nan_to_num(alpha, nan=np.inf), np.nan_to_num(agreement, nan=np.inf), undefined))


def word_key(text: str) -> str:
    """What the per-word figures group words by: case-folded, without the punctuation around it."""
    return text.strip().strip(_PUNCTUATION).casefold() or text.strip().casefold()


def unit_positions(clip_words: np.ndarray) -> np.ndarray:
    """The word index (0-based) of every unit, units numbered clip by clip as Ratings.unit_counts."""
    clip_words = np.asarray(clip_words, dtype=np.int64)
    starts = np.repeat(np.cumsum(clip_words) - clip_words, clip_words)
    return np.arange(int(clip_words.sum())) - starts


@dataclass(frozen=True)
class PairConfusion:
    a: np.ndarray  # annotator index, a < b
    b: np.ndarray
    clips: np.ndarray  # clips both annotated
    joint: np.ndarray  # (pairs, 3, 3) a's level (row) by b's level (column), words both labelled
    kappa: np.ndarray  # Cohen's kappa on the binary collapse (NaN: 0/0)


def top_pair_confusions(tables: PairTables, *, pairs: int) -> PairConfusion:
    """The `pairs` annotator pairs that share the most clips (ties: more shared words, then by a, b)."""
    if tables.a.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return PairConfusion(empty, empty, empty, np.zeros((0, 3, 3), dtype=np.int64), np.empty(0))
    # Rows of one annotator pair are contiguous (clip_pair_tables sorts them so).
    starts = np.flatnonzero(np.concatenate([[True], (np.diff(tables.a) != 0) | (np.diff(tables.b) != 0)]))
    clips = np.diff(np.append(starts, tables.a.size))
    # Choose by 1-D sums first; only the chosen pairs' tables are summed (there are ~400,000 pairs
    # at MMEE's size, and their tables would cost far more memory than the choice).
    words = np.add.reduceat(tables.joint.reshape(-1, 9).sum(axis=1, dtype=np.int64), starts)
    a, b = tables.a[starts], tables.b[starts]
    chosen = np.lexsort((b, a, -words, -clips))[:pairs]
    joint = np.stack([tables.joint[starts[i] : starts[i] + clips[i]].sum(axis=0, dtype=np.int64) for i in chosen])
    return PairConfusion(a[chosen], b[chosen], clips[chosen], joint, table_kappas_by(joint, [BINARY_DISAGREEMENT])[0])
