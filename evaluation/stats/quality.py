"""Annotator quality and flags. Pure; the kappa is evaluation.stats.annotator_quality's leave-one-out kappa.

Per annotator, over every annotation in scope (before any subsampling, attention checks apart):
- kappa: Cohen's kappa against the majority of the OTHER annotators of the same clips
  (evaluation.stats.annotator_quality: clips with at least `min_others` others, at least `min_words`
  words pooled, else undefined with the reason);
- marked share: words marked 1 or 2 over words labelled;
- attention checks: passed / answered;
- median seconds per clip, over every clip answered, checks included (time is effort either way),
  as on the participant review page.

A threshold left as None is off. An annotator is flagged for every threshold crossed (in the
order of the participant review page); an undefined value crosses nothing.
"""

import statistics
from dataclasses import asdict, dataclass, replace

import numpy as np

from evaluation.stats.annotator_quality import MIN_OTHERS, MIN_WORDS, leave_one_out_kappas
from evaluation.stats.study_data import StudyData

FLAG_DESCRIPTIONS = {
    "min_attention": "share of attention checks passed below",
    "min_kappa": "leave-one-out kappa below",
    "min_median_seconds": "median seconds per clip below",
    "max_marked_share": "share of words marked above",
}


@dataclass(frozen=True)
class Thresholds:
    min_kappa: float | None = None
    min_attention: float | None = None
    min_median_seconds: float | None = None
    max_marked_share: float | None = None
    min_others: int = MIN_OTHERS
    min_words: int = MIN_WORDS

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AnnotatorQuality:
    annotator: str
    clips: int
    words: int
    marked_share: float | None
    kappa: float | None
    kappa_reason: str
    kappa_words: int
    checks_passed: int
    checks_total: int
    median_seconds: float | None
    flags: tuple[str, ...]

    @property
    def attention_share(self) -> float | None:
        return self.checks_passed / self.checks_total if self.checks_total else None


def annotator_quality(data: StudyData, thresholds: Thresholds) -> list[AnnotatorQuality]:
    """One row per annotator of `data`, in annotator order."""
    clips: list[dict[int, np.ndarray]] = [{} for _ in data.clip_keys]
    for row, (clip, annotator) in enumerate(zip(data.clip.tolist(), data.annotator.tolist())):
        clips[clip][annotator] = data.levels[row, : data.clip_words[clip]]
    kappas = leave_one_out_kappas(
        (clip for clip in clips if clip), min_others=thresholds.min_others, min_words=thresholds.min_words
    )
    n = len(data.annotator_keys)
    annotated = np.bincount(data.annotator, minlength=n)
    labelled = np.bincount(data.annotator, weights=(data.levels >= 0).sum(axis=1), minlength=n).astype(np.int64)
    marked = np.bincount(data.annotator, weights=(data.levels >= 1).sum(axis=1), minlength=n).astype(np.int64)
    checks = np.bincount(data.check_annotator, minlength=n)
    passed = np.bincount(data.check_annotator, weights=data.check_passed, minlength=n).astype(np.int64)
    seconds: list[list[float]] = [[] for _ in range(n)]
    for annotator, spent in zip(data.annotator.tolist(), data.seconds.tolist()):
        seconds[annotator].append(spent)
    for annotator, spent in zip(data.check_annotator.tolist(), data.check_seconds.tolist()):
        seconds[annotator].append(spent)
    rows = []
    for index, key in enumerate(data.annotator_keys):
        kappa = kappas.get(index)
        row = AnnotatorQuality(
            annotator=key,
            clips=int(annotated[index]),
            words=int(labelled[index]),
            marked_share=int(marked[index]) / int(labelled[index]) if labelled[index] else None,
            kappa=kappa.kappa if kappa else None,
            kappa_reason=kappa.reason if kappa else "no clips answered",
            kappa_words=kappa.words if kappa else 0,
            checks_passed=int(passed[index]),
            checks_total=int(checks[index]),
            median_seconds=statistics.median(sorted(seconds[index])) if seconds[index] else None,
            flags=(),
        )
        rows.append(_flagged(row, thresholds))
    return rows


def _flagged(row: AnnotatorQuality, thresholds: Thresholds) -> AnnotatorQuality:
    crossed = [
        ("min_attention", _below(row.attention_share, thresholds.min_attention)),
        ("min_kappa", _below(row.kappa, thresholds.min_kappa)),
        ("min_median_seconds", _below(row.median_seconds, thresholds.min_median_seconds)),
        ("max_marked_share", _below(thresholds.max_marked_share, row.marked_share)),
    ]
    flags = tuple(name for name, hit in crossed if hit)
    return replace(row, flags=flags)


def _below(value: float | None, limit: float | None) -> bool:
    return value is not None and limit is not None and value < limit
