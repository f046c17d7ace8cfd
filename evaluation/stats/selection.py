"""Which annotations an analysis uses: the one rule shared by agreement reports and label sets,
so that both, given the same parameters, see exactly the same annotations. Pure numpy.

1. annotator quality on every annotation in scope, and flags (evaluation.stats.quality);
2. without the flagged annotators when asked, and without those who failed an attention check
   when asked (both listed);
3. every clip subsampled to exactly N annotations with the seed (evaluation.stats.aggregation;
   clips with fewer are listed and left out).
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evaluation.stats.aggregation import subsample
from evaluation.stats.quality import AnnotatorQuality, Thresholds, annotator_quality
from evaluation.stats.study_data import StudyData


@dataclass(frozen=True)
class Selection:
    quality: list[AnnotatorQuality]  # one row per annotator of the data
    flagged: list[int]  # annotator indexes with a quality flag
    excluded: list[int]  # annotator indexes left out (flagged or failed checks, as asked)
    in_scope: np.ndarray  # bool per annotation: its annotator is not excluded
    kept: np.ndarray  # bool per annotation: in scope and kept by the subsample
    short: list[tuple[str, int]]  # (clip key, annotations in scope) of clips with fewer than N


def select_annotations(
    data: StudyData,
    *,
    thresholds: Thresholds,
    exclude_flagged: bool,
    n: int | None,
    seed: int,
    exclude_failed_checks: bool = False,
    step: Callable[[str], None] = lambda phase: None,
) -> Selection:
    step("annotator quality")
    quality = annotator_quality(data, thresholds)
    flagged = [i for i, row in enumerate(quality) if row.flags]
    excluded = set(flagged) if exclude_flagged else set()
    if exclude_failed_checks:
        excluded |= set(np.unique(data.check_annotator[~data.check_passed]).tolist())
    excluded_list = sorted(excluded)
    in_scope = ~np.isin(data.annotator, excluded_list)
    step("subsampling")
    keys = np.asarray(data.clip_keys, dtype=object)[data.clip[in_scope]]
    annotators = np.asarray(data.annotator_keys, dtype=object)[data.annotator[in_scope]]
    chosen = subsample(keys, annotators, n=n, seed=seed)
    kept = np.zeros(data.n_annotations, dtype=bool)
    kept[np.flatnonzero(in_scope)[chosen.keep]] = True
    return Selection(quality, flagged, excluded_list, in_scope, kept, _short_clips(data, in_scope, n))


def _short_clips(data: StudyData, in_scope: np.ndarray, n: int | None) -> list[tuple[str, int]]:
    """Clips with fewer than n annotations left (none at all included), in key order."""
    if n is None:
        return []
    per_clip = np.bincount(data.clip[in_scope], minlength=len(data.clip_keys))
    return [(key, int(count)) for key, count in zip(data.clip_keys, per_clip.tolist()) if count < n]
