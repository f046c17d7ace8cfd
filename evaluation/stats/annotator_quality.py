"""How well one annotator agrees with the others who labelled the same clips. Pure numpy, no Django.

Leave-one-out kappa: for annotator `a`, on every clip `a` labelled that at least `min_others` other
annotators also labelled, the reference for each word is the binary majority of the OTHERS (not
`a`): a word counts as emphasized when MORE than half of the others marked it (level >= 1), as in
MMEE's aggregation. Tie policy: with an even number of others, exactly half is NOT emphasized.
Cohen's kappa is then computed once over all those words pooled, between `a`'s binary labels
(level >= 1) and that reference.

The others may be restricted to a set of reference annotators (`reference`): the participant review
page keeps rejected participants out of everyone's reference, as the agreement report leaves them
out of its data, and still shows a rejected participant's own kappa against the others.

Kappa is undefined, and returned as None with a reason, when fewer than `min_words` words are
pooled, or when the expected agreement is 1 (the annotator and the reference each use a single,
identical label everywhere): 0/0, which neither means perfect agreement nor chance.

One computation for everyone, in arrays (`leave_one_out_table`): per clip, the reference annotators'
marks of each word are summed once; an annotation's "others" are that sum less its own marks when
it is a reference annotator itself. Every annotation then gives four integers (words, own marks,
reference marks, both), summed per annotator. The mapping API (`leave_one_out_kappa(s)`) turns
clips given as {annotator: levels} into those arrays.
"""

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


def leave_one_out_table(
    clip: np.ndarray,
    annotator: np.ndarray,
    levels: np.ndarray,
    clip_words: np.ndarray,
    *,
    n_annotators: int,
    reference: np.ndarray | None = None,
    min_others: int = MIN_OTHERS,
    min_words: int = MIN_WORDS,
) -> list[KappaResult | None]:
    """One result per annotator index (None for an annotator without annotations).

    clip, annotator: (n,) per annotation; levels: (n, width), -1 past the clip's last word;
    clip_words: words per clip; reference: bool per annotator, who makes up the others (all if None).
    """
    if min_others < 1:
        raise ValueError("min_others must be at least 1")
    clip, annotator = np.asarray(clip, dtype=np.int64), np.asarray(annotator, dtype=np.int64)
    levels = np.asarray(levels)
    within = np.arange(levels.shape[1])[None, :] < np.asarray(clip_words)[clip][:, None]
    marked = (levels >= 1) & within
    is_reference = np.ones(clip.size, dtype=bool) if reference is None else np.asarray(reference)[annotator]
    clips = int(clip.max()) + 1 if clip.size else 0
    width = levels.shape[1]
    cells = (clip[is_reference, None] * width + np.arange(width)[None, :]).ravel()
    reference_marks = np.bincount(cells, weights=marked[is_reference].ravel(), minlength=clips * width)
    reference_marks = reference_marks.astype(np.int64).reshape(clips, width)
    others = np.bincount(clip, weights=is_reference, minlength=clips).astype(np.int64)[clip] - is_reference
    others_marks = reference_marks[clip] - (marked & is_reference[:, None])
    majority = (2 * others_marks > others[:, None]) & within
    pooled = others >= min_others
    columns = [
        pooled,
        within.sum(axis=1) * pooled,
        marked.sum(axis=1) * pooled,
        majority.sum(axis=1) * pooled,
        (marked & majority).sum(axis=1) * pooled,
    ]
    sums = [np.bincount(annotator, weights=c, minlength=n_annotators).astype(np.int64) for c in columns]
    present = np.bincount(annotator, minlength=n_annotators) > 0
    return [
        _kappa_result(*(int(s[i]) for s in sums), min_others=min_others, min_words=min_words) if present[i] else None
        for i in range(n_annotators)
    ]


def _kappa_result(clips: int, n: int, own: int, majority: int, both: int, *, min_others: int, min_words: int):
    if not clips:
        return KappaResult(None, f"no clip shared with at least {min_others} other annotators", 0, 0)
    if n < min_words:
        return KappaResult(
            None, f"only {n} words on clips shared with at least {min_others} others (need {min_words})", clips, n
        )
    agree = n - own - majority + 2 * both
    expected = own * majority + (n - own) * (n - majority)
    if expected == n * n:
        return KappaResult(
            None,
            "no variance: the annotator and the others' majority each gave one and the same label "
            "to every word, so chance agreement is 1",
            clips,
            n,
        )
    return KappaResult((n * agree - expected) / (n * n - expected), "", clips, n)


def leave_one_out_kappas(
    clips: Iterable[Clip], *, min_others: int = MIN_OTHERS, min_words: int = MIN_WORDS
) -> dict[Hashable, KappaResult]:
    """The leave-one-out kappa of every annotator who appears in `clips` ({annotator: levels} each)."""
    clips = [clip for clip in clips if clip]
    names = sorted({name for clip in clips for name in clip}, key=repr)
    index = {name: i for i, name in enumerate(names)}
    rows = [(c, index[name], np.asarray(levels)) for c, clip in enumerate(clips) for name, levels in clip.items()]
    words = np.array([_clip_length(clip) for clip in clips], dtype=np.int64)
    levels = np.full((len(rows), int(words.max()) if words.size else 0), -1, dtype=np.int64)
    for row, (_, _, values) in enumerate(rows):
        levels[row, : values.size] = values
    results = leave_one_out_table(
        np.array([r[0] for r in rows], dtype=np.int64),
        np.array([r[1] for r in rows], dtype=np.int64),
        levels,
        words,
        n_annotators=len(names),
        min_others=min_others,
        min_words=min_words,
    )
    # every name has annotations (it was read from them), so none of their results is None
    return {name: result for name, i in index.items() if (result := results[i]) is not None}


def leave_one_out_kappa(
    annotator: Hashable, clips: Iterable[Clip], *, min_others: int = MIN_OTHERS, min_words: int = MIN_WORDS
) -> KappaResult:
    """Kappa of `annotator` against the majority of the others, pooled over shared clips."""
    if min_others < 1:
        raise ValueError("min_others must be at least 1")
    theirs = [clip for clip in clips if annotator in clip]
    result = leave_one_out_kappas(theirs, min_others=min_others, min_words=min_words).get(annotator)
    return result or KappaResult(None, f"no clip shared with at least {min_others} other annotators", 0, 0)


def _clip_length(clip: Clip) -> int:
    shapes = {key: np.asarray(levels).shape for key, levels in clip.items()}
    if len(set(shapes.values())) > 1:
        raise ValueError(f"annotators gave different numbers of words for the same clip: {shapes}")
    return int(next(iter(shapes.values()))[0])
