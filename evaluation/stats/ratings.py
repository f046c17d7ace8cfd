"""Word-level ratings of clips, in the arrays every agreement measure starts from. Pure numpy.

One row per annotation: the clip it is of, the annotator who gave it, and a level per word
(0, 1, 2; -1 where the annotation has no level for a word, and past the clip's last word).
Rows are kept in one canonical order, by clip and then by annotator, so that every result is a
function of the data and never of the order a database returned it in.

The unit of agreement is the word: (clip, word index). Units are numbered clip by clip.
"""

from dataclasses import dataclass

import numpy as np

from evaluation.stats.aggregation import LEVELS

_ROWS_PER_BLOCK = 65_536


@dataclass(frozen=True)
class Ratings:
    clip: np.ndarray  # (n,) int64, index of the clip
    annotator: np.ndarray  # (n,) int64, index of the annotator
    levels: np.ndarray  # (n, width) int8
    clip_words: np.ndarray  # (clips,) int64, words of each clip
    n_annotators: int

    @classmethod
    def build(cls, *, clip, annotator, levels, clip_words, n_annotators: int | None = None) -> "Ratings":
        clip = np.asarray(clip, dtype=np.int64)
        annotator = np.asarray(annotator, dtype=np.int64)
        levels = np.asarray(levels)
        clip_words = np.asarray(clip_words, dtype=np.int64)
        if levels.ndim != 2 or clip.shape != annotator.shape or clip.shape != (levels.shape[0],):
            raise ValueError("clip, annotator and the rows of levels must have the same length")
        if clip.size and (clip.min() < 0 or clip.max() >= clip_words.size):
            raise ValueError("a clip index is outside clip_words")
        if levels.size and (levels.min() < -1 or levels.max() > LEVELS - 1):
            raise ValueError("levels must be 0, 1 or 2 (or -1 for a word without a level)")
        if clip_words.size and clip_words.max() > levels.shape[1]:
            raise ValueError("levels has fewer columns than the longest clip has words")
        columns = np.arange(levels.shape[1])
        if np.any((levels >= 0) & (columns[None, :] >= clip_words[clip][:, None])):
            raise ValueError("an annotation has a level past its clip's last word")
        order = np.lexsort((annotator, clip))
        clip, annotator, levels = clip[order], annotator[order], levels[order].astype(np.int8)
        if np.any((np.diff(clip) == 0) & (np.diff(annotator) == 0)):
            raise ValueError("an annotator appears twice on the same clip")
        if n_annotators is None:
            n_annotators = int(annotator.max()) + 1 if annotator.size else 0
        return cls(clip, annotator, levels, clip_words, int(n_annotators))

    @classmethod
    def from_matrix(cls, matrix) -> "Ratings":
        """Raters x units, NaN where a rater gave no level: every unit becomes a clip of one word."""
        matrix = np.asarray(matrix, dtype=float)
        raters, units = np.nonzero(~np.isnan(matrix))
        levels = matrix[raters, units].astype(np.int64).reshape(-1, 1)
        return cls.build(
            clip=units,
            annotator=raters,
            levels=levels,
            clip_words=np.ones(matrix.shape[1], dtype=np.int64),
            n_annotators=matrix.shape[0],
        )

    @property
    def n_clips(self) -> int:
        return int(self.clip_words.size)

    def unit_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(units x 3) counts of each level, and the clip of each unit, for every word of every clip."""
        offsets = np.concatenate([[0], np.cumsum(self.clip_words)])
        units = int(offsets[-1])
        flat = np.zeros(units * LEVELS, dtype=np.int64)
        # A block of annotations at a time: the (judgements,) index arrays of all of them at once were
        # the report's largest arrays at ten times MMEE's size.
        for start in range(0, self.clip.size, _ROWS_PER_BLOCK):
            levels = self.levels[start : start + _ROWS_PER_BLOCK]
            rows, words = np.nonzero(levels >= 0)
            unit = offsets[self.clip[start + rows]] + words
            flat += np.bincount(unit * LEVELS + levels[rows, words], minlength=units * LEVELS)
        unit_clip = np.repeat(np.arange(self.n_clips), self.clip_words)
        return flat.reshape(units, LEVELS).astype(np.int64), unit_clip


def binary_counts(counts: np.ndarray) -> np.ndarray:
    """(units x 3) level counts collapsed to (units x 2): not emphasized, emphasized (1 or 2)."""
    counts = np.asarray(counts)
    return np.stack([counts[:, 0], counts[:, 1] + counts[:, 2]], axis=1)


def counts_from_matrix(matrix, values) -> np.ndarray:
    """Raters x units (NaN for missing) to units x len(values) counts, for published examples."""
    matrix = np.asarray(matrix, dtype=float)
    return np.stack([(matrix == value).sum(axis=0) for value in values], axis=1).astype(np.int64)
