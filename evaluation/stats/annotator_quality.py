"""How well one annotator agrees with the others who labelled the same clips.

Pure numpy, no Django. A clip is a mapping from annotator to that annotator's
word levels (0, 1, 2), all of the clip's length.

Leave-one-out kappa: for annotator `a`, on every clip `a` labelled that at
least `min_others` other annotators also labelled, the reference for each
word is the binary majority of the OTHERS (not `a`): a word counts as
emphasized when MORE than half of the others marked it (level >= 1), as in
MMEE's aggregation. Tie policy: with an even number of others, exactly half
is NOT emphasized. Cohen's kappa is then computed once over all those words
pooled, between `a`'s binary labels (level >= 1) and that reference.

Kappa is undefined, and returned as None with a reason, when fewer than
`min_words` words are pooled, or when the expected agreement is 1 (the
annotator and the reference each use a single, identical label everywhere):
0/0, which neither means perfect agreement nor chance.
"""

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

MIN_OTHERS = 2
MIN_WORDS = 20

Levels = Sequence[int] | np.ndarray
Clip = Mapping[Hashable, Levels]


@dataclass(frozen=True)
class KappaResult:
    kappa: float | None
    reason: str  # why kappa is None; empty when it is defined
    clips: int  # clips pooled (those with at least min_others others)
    words: int  # words pooled


def emphasized(levels: Levels) -> np.ndarray:
    """Binary collapse: level 1 or 2 is emphasized."""
    return np.asarray(levels) >= 1


def majority_of(rows: np.ndarray) -> np.ndarray:
    """Per word, True when MORE than half of the rows (annotators) marked it; half is not enough."""
    rows = np.asarray(rows)
    return 2 * emphasized(rows).sum(axis=0) > rows.shape[0]


def binary_kappa(labels: np.ndarray, reference: np.ndarray) -> float | None:
    """Cohen's kappa of two boolean vectors; None when the expected agreement is 1.

    Exact in integers: with n items, n_a and n_b positives and `agree` equal
    pairs, kappa = (n*agree - E) / (n^2 - E), E = n_a*n_b + (n-n_a)*(n-n_b).
    """
    labels, reference = np.asarray(labels, dtype=bool), np.asarray(reference, dtype=bool)
    if labels.shape != reference.shape or labels.ndim != 1:
        raise ValueError("both label vectors must be one-dimensional and of the same length")
    n = int(labels.size)
    n_a, n_b = int(labels.sum()), int(reference.sum())
    agree = int((labels == reference).sum())
    expected = n_a * n_b + (n - n_a) * (n - n_b)
    if n == 0 or expected == n * n:
        return None
    return (n * agree - expected) / (n * n - expected)


def leave_one_out_kappa(
    annotator: Hashable, clips: Iterable[Clip], *, min_others: int = MIN_OTHERS, min_words: int = MIN_WORDS
) -> KappaResult:
    """Kappa of `annotator` against the majority of the others, pooled over shared clips."""
    if min_others < 1:
        raise ValueError("min_others must be at least 1")
    own, reference, pooled_clips = [], [], 0
    for clip in clips:
        if annotator not in clip or len(clip) - 1 < min_others:
            continue
        mine = np.asarray(clip[annotator])
        others = [np.asarray(levels) for key, levels in clip.items() if key != annotator]
        if any(levels.shape != mine.shape for levels in others):
            raise ValueError(f"annotators gave different numbers of words for the same clip: {_shapes(clip)}")
        own.append(emphasized(mine))
        reference.append(majority_of(np.stack(others)))
        pooled_clips += 1
    return _kappa_result(own, reference, pooled_clips, min_others=min_others, min_words=min_words)


def leave_one_out_kappas(
    clips: Iterable[Clip], *, min_others: int = MIN_OTHERS, min_words: int = MIN_WORDS
) -> dict[Hashable, KappaResult]:
    """`leave_one_out_kappa` for every annotator who appears in `clips`."""
    clips = list(clips)
    clips_of: dict[Hashable, list[Clip]] = defaultdict(list)
    for clip in clips:
        for annotator in clip:
            clips_of[annotator].append(clip)
    return {
        annotator: leave_one_out_kappa(annotator, theirs, min_others=min_others, min_words=min_words)
        for annotator, theirs in clips_of.items()
    }


def _kappa_result(own, reference, clips: int, *, min_others: int, min_words: int) -> KappaResult:
    if not clips:
        return KappaResult(None, f"no clip shared with at least {min_others} other annotators", 0, 0)
    labels, majority = np.concatenate(own), np.concatenate(reference)
    words = int(labels.size)
    if words < min_words:
        return KappaResult(
            None, f"only {words} words on clips shared with at least {min_others} others (need {min_words})",
            clips, words,
        )  # fmt: skip
    kappa = binary_kappa(labels, majority)
    if kappa is None:
        return KappaResult(
            None, "no variance: the annotator and the others' majority each gave one and the same label "
            "to every word, so chance agreement is 1", clips, words,
        )  # fmt: skip
    return KappaResult(kappa, "", clips, words)


def _shapes(clip: Clip) -> dict:
    return {key: np.asarray(levels).shape for key, levels in clip.items()}
