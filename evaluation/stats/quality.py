"""Annotator quality and flags: the one computation the agreement report, the label sets and the
participant review page share. Pure numpy; the kappa is evaluation.stats.annotator_quality's.

Per annotator, over every annotation in scope (before any subsampling, attention checks apart):
- kappa: Cohen's kappa against the majority of the OTHER annotators of the same clips
  (evaluation.stats.annotator_quality: clips with at least `min_others` others, at least `min_words`
  words pooled, else undefined with the reason); `reference` may restrict who the others are;
- marked share: words marked 1 or 2 over words labelled;
- attention checks: passed / answered;
- median seconds per clip, over every clip answered, checks included (time is effort either way);
- median time ratio: the median over the same clips of seconds spent / the clip's duration, clips of
  unknown duration left out. "Too quick" compares this with `min_time_ratio`: 1.0 flags an
  annotator who typically spent less time on a clip than it takes to play it once, whether the
  clips last 2.5 s or 20 s. The absolute `min_median_seconds` is off unless asked for.

A threshold left as None is off. An annotator is flagged for every threshold crossed (in the order
of FLAG_DESCRIPTIONS); an undefined value crosses nothing.
"""

from dataclasses import asdict, dataclass, replace

import numpy as np

from evaluation.stats.annotator_quality import MIN_OTHERS, MIN_WORDS, leave_one_out_table
from evaluation.stats.study_data import StudyData

FLAG_DESCRIPTIONS = {
    "min_attention": "share of attention checks passed below",
    "min_kappa": "leave-one-out kappa below",
    "min_time_ratio": "median time per clip, as a multiple of the clip's duration, below",
    "min_median_seconds": "median seconds per clip below",
    "max_marked_share": "share of words marked above",
}


@dataclass(frozen=True)
class Thresholds:
    min_kappa: float | None = None
    min_attention: float | None = None
    min_median_seconds: float | None = None  # absolute; kept for parameters stored before min_time_ratio
    max_marked_share: float | None = None
    min_others: int = MIN_OTHERS
    min_words: int = MIN_WORDS
    min_time_ratio: float | None = None

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
    median_time_ratio: float | None = None

    @property
    def attention_share(self) -> float | None:
        return self.checks_passed / self.checks_total if self.checks_total else None


def annotator_quality(
    data: StudyData, thresholds: Thresholds, *, reference: np.ndarray | None = None
) -> list[AnnotatorQuality]:
    """One row per annotator of `data`, in annotator order; `reference` (bool per annotator) says
    who may be among the others of a leave-one-out kappa (everyone when None)."""
    n = len(data.annotator_keys)
    kappas = leave_one_out_table(
        data.clip,
        data.annotator,
        data.levels,
        data.clip_words,
        n_annotators=n,
        reference=reference,
        min_others=thresholds.min_others,
        min_words=thresholds.min_words,
    )
    annotated = np.bincount(data.annotator, minlength=n)
    labelled = np.bincount(data.annotator, weights=(data.levels >= 0).sum(axis=1), minlength=n).astype(np.int64)
    marked = np.bincount(data.annotator, weights=(data.levels >= 1).sum(axis=1), minlength=n).astype(np.int64)
    checks = np.bincount(data.check_annotator, minlength=n)
    passed = np.bincount(data.check_annotator, weights=data.check_passed, minlength=n).astype(np.int64)
    who = np.concatenate([data.annotator, data.check_annotator])
    seconds = np.concatenate([data.seconds, data.check_seconds])
    assert data.clip_durations is not None and data.check_durations is not None  # StudyData.__post_init__ fills both
    durations = np.concatenate([data.clip_durations[data.clip], data.check_durations])
    median_seconds = group_medians(who, seconds, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(durations > 0, seconds / durations, np.nan)
    median_ratios = group_medians(who, ratios, n)
    rows = []
    for index, key in enumerate(data.annotator_keys):
        kappa = kappas[index]
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
            median_seconds=_number(median_seconds[index]),
            flags=(),
            median_time_ratio=_number(median_ratios[index]),
        )
        rows.append(_flagged(row, thresholds))
    return rows


def group_medians(group: np.ndarray, values: np.ndarray, groups: int) -> np.ndarray:
    """The median of the finite values of each group (NaN for a group without one), as
    statistics.median gives it: the middle value, or the mean of the two middle ones."""
    group, values = np.asarray(group, dtype=np.int64), np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    group, values = group[finite], values[finite]
    order = np.lexsort((values, group))
    values = values[order]
    counts = np.bincount(group, minlength=groups)
    starts = np.cumsum(counts) - counts
    present = counts > 0
    low = np.where(present, starts + (counts - 1) // 2, 0)
    high = np.where(present, starts + counts // 2, 0)
    medians = np.full(groups, np.nan)
    medians[present] = (values[low[present]] + values[high[present]]) / 2
    return medians


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _flagged(row: AnnotatorQuality, thresholds: Thresholds) -> AnnotatorQuality:
    crossed = [
        ("min_attention", _below(row.attention_share, thresholds.min_attention)),
        ("min_kappa", _below(row.kappa, thresholds.min_kappa)),
        ("min_time_ratio", _below(row.median_time_ratio, thresholds.min_time_ratio)),
        ("min_median_seconds", _below(row.median_seconds, thresholds.min_median_seconds)),
        ("max_marked_share", _below(thresholds.max_marked_share, row.marked_share)),
    ]
    flags = tuple(name for name, hit in crossed if hit)
    return replace(row, flags=flags)


def _below(value: float | None, limit: float | None) -> bool:
    return value is not None and limit is not None and value < limit
