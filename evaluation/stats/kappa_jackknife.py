"""Fleiss' kappa's standard error when a study draws both its clips and its listeners: a two-way
delete-one jackknife. Pure numpy.

A listener hears a task of clips, so which listeners a study happens to draw moves kappa over
all of their clips at once. Clustering the linearized kappa by clip and by listener (Cameron,
Gelbach and Miller 2011) misses much of that in a crowd with a few listeners who mark every word
heavily or only the first: with five listeners a clip, whether a heavy marker's clip-mates mark
too is not a small perturbation, and the first-order terms it keeps gave 55 to 70 % of the spread
of kappa over fresh crowds (issue 31, item 4). Deleting each listener in turn keeps those
interactions: over 200 fresh crowds of each harness mixture tried, the jackknife's mean error was
within 12 % of the spread of kappa.

The multiway jackknife (MacKinnon, Nielsen and Webb 2021, their CV3 in two dimensions) adds the
variances of deleting each clip and each listener and takes off that of deleting each annotation,
which both of those count; never below the clips' own.

Kappa here is evaluation.stats.fleiss's, of the binary marks (level 1 or 2) with any number of
listeners a word (Gwet's generalization): deleting a listener leaves their clips with one fewer.
Every deletion changes only four sums (the paired words' agreement, the paired words, the words'
marked shares, the words rated), so all of them cost one pass over the annotations.
"""

import math

import numpy as np


def two_way_jackknife_se(clip: np.ndarray, annotator: np.ndarray, levels: np.ndarray) -> float | None:
    """The standard error of Fleiss' kappa of the marks of `levels` (annotations x words; 0, 1, 2, or
    -1 where the annotation left the word out), each annotation by `annotator` on `clip`, the
    clips and the listeners both drawn. None where kappa, or a deletion's kappa, is undefined, or
    with fewer than two clips or two listeners."""
    clip, annotator = np.asarray(clip, dtype=np.int64), np.asarray(annotator, dtype=np.int64)
    levels = np.asarray(levels)
    heard = levels >= 0
    marked = (levels >= 1) & heard
    _, row_clip = np.unique(clip, return_inverse=True)
    clips = int(row_clip.max()) + 1 if clip.size else 0
    if clips < 2 or np.unique(annotator).size < 2:
        return None
    marks = np.zeros((clips, levels.shape[1]))
    np.add.at(marks, row_clip, marked)
    raters = np.zeros_like(marks)
    np.add.at(raters, row_clip, heard)
    words = _word_sums(marks, raters)  # (4, clips, words)
    totals = words.sum(axis=(1, 2))
    if not np.isfinite(_kappa(totals[:, None])).all():
        return None
    # Deleting one annotation: its words lose one rater, and a mark where it marked.
    without = _word_sums(marks[row_clip] - marked, raters[row_clip] - heard)
    by_annotation = np.where(heard[None], without - words[:, row_clip], 0.0).sum(axis=2)  # (4, annotations)
    by_clip = -words.sum(axis=2)  # (4, clips)
    clip_variance = _jackknife_variance(totals, by_clip)
    listener_variance = _jackknife_variance(totals, _grouped(by_annotation, annotator))
    annotation_variance = _jackknife_variance(totals, by_annotation)
    if clip_variance is None or listener_variance is None or annotation_variance is None:
        return None
    return math.sqrt(max(clip_variance, clip_variance + listener_variance - annotation_variance))


def _word_sums(marks: np.ndarray, raters: np.ndarray) -> np.ndarray:
    """(4, ...) per word: its agreement where paired, whether paired, its marked share where rated,
    whether rated (the sums generalized Fleiss' kappa is a function of)."""
    paired, rated = raters >= 2, raters >= 1
    with np.errstate(invalid="ignore", divide="ignore"):
        agreement = (marks * (marks - 1) + (raters - marks) * (raters - marks - 1)) / (raters * (raters - 1))
        share = marks / raters
    return np.stack([np.where(paired, agreement, 0.0), paired, np.where(rated, share, 0.0), rated]).astype(np.float64)


def _kappa(sums: np.ndarray) -> np.ndarray:
    """Fleiss' kappa of each column of (4, k) sums; NaN where undefined."""
    agreement, paired, share, rated = sums
    with np.errstate(invalid="ignore", divide="ignore"):
        p = share / rated
        chance = p * p + (1 - p) ** 2
        return np.where((paired > 0) & (p > 0) & (p < 1), (agreement / paired - chance) / (1 - chance), np.nan)


def _grouped(changes: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """(4, groups) the annotations' changes summed by group: deleting a listener deletes all of
    theirs (a listener hears a clip once, so their changes to a clip's words add up)."""
    _, group = np.unique(groups, return_inverse=True)
    return np.stack([np.bincount(group, change) for change in changes])


def _jackknife_variance(totals: np.ndarray, changes: np.ndarray) -> float | None:
    """(g - 1) / g times the sum of squares of the g delete-one kappas about their mean."""
    deleted = _kappa(totals[:, None] + changes)
    if deleted.size < 2 or not np.isfinite(deleted).all():
        return None
    g = deleted.size
    return (g - 1) / g * float(np.sum((deleted - deleted.mean()) ** 2))
