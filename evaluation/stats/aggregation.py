"""Word labels from several annotators, subsampling to N annotations a clip, majority votes.

Pure numpy, no Django. Levels are 0 (not emphasized), 1 (emphasized), 2 (heavily emphasized);
-1 marks a word an annotation has no level for.

- Binary label: a word is emphasized when MORE than half of the clip's annotators marked it
  (level 1 or 2). Exactly half is not emphasized.
- Scalar label: the mean of the ordinal scores 0, 0.5 and 1 of levels 0, 1 and 2.
- Subsampling keeps, for every clip with at least N annotations, the N whose keyed hash of
  (seed, clip, annotator) is smallest: a uniformly random subset that depends only on the seed and
  on who annotated that clip, never on the order rows arrive in nor on other clips. Clips with
  fewer than N annotations are left out and listed.
- Majority vote over categorical answers takes the most frequent answer; the tie policy is an
  argument, never implicit.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

LEVELS = 3
SCORES = (0.0, 0.5, 1.0)
TIE_POLICIES = ("none", "lowest", "random")


def level_counts(levels: np.ndarray) -> np.ndarray:
    """(annotations x words) levels, -1 for none, to (words x 3) counts of each level."""
    levels = np.asarray(levels)
    if levels.ndim != 2:
        raise ValueError("levels must be a two-dimensional (annotations x words) array")
    _check_levels(levels)
    return np.stack([(levels == level).sum(axis=0) for level in range(LEVELS)], axis=1).astype(np.int64)


def binary_labels(counts: np.ndarray) -> np.ndarray:
    """Per word: emphasized when more than half of its annotators gave level 1 or 2."""
    counts = np.asarray(counts)
    return 2 * (counts[:, 1] + counts[:, 2]) > counts.sum(axis=1)


def scalar_labels(counts: np.ndarray) -> np.ndarray:
    """Per word: mean of the scores 0, 0.5, 1; NaN for a word nobody labelled.

    Computed as (n1 + 2 n2) / (2 n), one correctly rounded division of integers.
    """
    counts = np.asarray(counts, dtype=np.int64)
    total = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts[:, 1] + 2 * counts[:, 2]) / (2 * total)


@dataclass(frozen=True)
class Subsample:
    keep: np.ndarray  # bool per annotation, in the order given
    short: dict[str, int]  # clip key -> annotations it has, for clips with fewer than n (all left out)
    n: int | None


def subsample(clip_keys: Sequence[str], annotator_keys: Sequence[str], *, n: int | None, seed: int) -> Subsample:
    """Keep exactly `n` annotations of every clip that has at least `n`; None keeps everything.

    Annotation i belongs to clip `clip_keys[i]` and annotator `annotator_keys[i]`; a pair may occur
    only once. The choice is a function of (seed, clip, annotator) alone.
    """
    clips = np.asarray(clip_keys, dtype=object)
    annotators = np.asarray(annotator_keys, dtype=object)
    if clips.shape != annotators.shape or clips.ndim != 1:
        raise ValueError("clip_keys and annotator_keys must be sequences of the same length")
    if n is None:
        return Subsample(np.ones(clips.size, dtype=bool), {}, None)
    if n < 1:
        raise ValueError("n must be at least 1, or None to keep every annotation")
    clip_names, clip_codes = np.unique(clips.astype(str), return_inverse=True)
    priority = np.array(keyed_priorities(seed, zip(clips, annotators)), dtype=np.uint64)
    annotator_rank = np.unique(annotators.astype(str), return_inverse=True)[1]
    order = np.lexsort((annotator_rank, priority, clip_codes))
    if clips.size and np.any((np.diff(clip_codes[order]) == 0) & (np.diff(annotator_rank[order]) == 0)):
        raise ValueError("an annotator appears twice on the same clip")
    sizes = np.bincount(clip_codes, minlength=clip_names.size)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank = np.empty(clips.size, dtype=np.int64)
    rank[order] = np.arange(clips.size) - starts[clip_codes[order]]
    keep = (rank < n) & (sizes[clip_codes] >= n)
    short = {str(name): int(size) for name, size in zip(clip_names, sizes) if size < n}
    return Subsample(keep, short, n)


def keyed_priority(seed: int, *parts: str) -> int:
    """A 64-bit pseudo-random number that depends only on the seed and the parts (keyed BLAKE2b)."""
    return keyed_priorities(seed, [parts])[0]


def keyed_priorities(seed: int, rows) -> list[int]:
    """keyed_priority of each row of parts. The keyed state is built once and copied per row (the
    key is BLAKE2b's first block, so a copy that goes on hashing the row gives the same digest)."""
    keyed = hashlib.blake2b(digest_size=8, key=str(int(seed)).encode())
    priorities = []
    for parts in rows:
        digest = keyed.copy()
        digest.update("\x1f".join(map(str, parts)).encode())
        priorities.append(int.from_bytes(digest.digest(), "big"))
    return priorities


def majority_vote(counts: np.ndarray, *, tie: str, seed: int | None = None) -> np.ndarray:
    """The most frequent category of each item (rows of an items x categories count matrix).

    Items without votes get -1. When categories share the highest count, `tie` decides:
    - "none": -1, no label;
    - "lowest": the tied category with the lowest index (the binary emphasis label is this rule
      on (not emphasized, emphasized) counts: a tie is not emphasized);
    - "random": one of the tied categories, uniformly, drawn with numpy's PCG64 seeded by
      `seed` (required) in item order, so the result is reproducible.
    """
    if tie not in TIE_POLICIES:
        raise ValueError(f"tie must be one of {', '.join(TIE_POLICIES)}, not {tie!r}")
    counts = np.asarray(counts)
    if counts.ndim != 2:
        raise ValueError("counts must be a two-dimensional (items x categories) array")
    if np.any(counts < 0):
        raise ValueError("counts cannot be negative")
    best = counts.max(axis=1, initial=0)
    tied = (counts == best[:, None]) & (best[:, None] > 0)
    winners = np.argmax(tied, axis=1)  # lowest tied index
    several = tied.sum(axis=1) > 1
    if tie == "none":
        winners[several] = -1
    elif tie == "random":
        if seed is None:
            raise ValueError('tie="random" needs a seed')
        keys = np.random.default_rng(seed).random(counts.shape)
        winners = np.where(several, np.argmax(np.where(tied, keys, -1.0), axis=1), winners)
    winners[best == 0] = -1
    return winners


def _check_levels(levels: np.ndarray) -> None:
    if levels.size and (levels.min() < -1 or levels.max() > LEVELS - 1):
        raise ValueError("levels must be 0, 1 or 2 (or -1 for a word without a level)")
