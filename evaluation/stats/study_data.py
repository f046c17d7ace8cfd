"""What a report is computed from, as plain arrays. Pure numpy, no Django.

annotation.selectors.study_data builds it from the database; bench/agreement_scale.py builds one directly.
`StudyData.build` puts everything in one canonical order (clips by key, annotators by key,
annotations by clip then annotator), so the report cannot depend on the order rows came in.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from evaluation.stats.drilldown import word_key
from evaluation.stats.ratings import Ratings

DIMENSIONS = ("language", "variety", "emotion")


@dataclass(frozen=True)
class StudyData:
    study: str
    clip_keys: tuple[str, ...]  # sorted; unique
    clip_groups: dict[str, tuple[str, ...]]  # dimension -> value per clip ("" when unknown)
    clip_words: np.ndarray  # (clips,) words of each clip
    annotator_keys: tuple[str, ...]  # sorted; unique
    clip: np.ndarray  # (n,) clip index of each annotation (attention checks not included)
    annotator: np.ndarray  # (n,) annotator index
    levels: np.ndarray  # (n, width) int8: 0, 1, 2, -1 past the clip's last word
    mismatch: np.ndarray  # (n,) bool: reported "audio does not match the transcript"
    seconds: np.ndarray  # (n,) float: time spent on the clip
    check_annotator: np.ndarray  # (k,) annotator index of each attention-check answer
    check_passed: np.ndarray  # (k,) bool
    check_seconds: np.ndarray  # (k,) float
    notes: dict[str, int] = field(default_factory=dict)  # what the source left out, by reason
    clip_durations: np.ndarray | None = None  # (clips,) float seconds of audio; NaN (or None: all) unknown
    check_durations: np.ndarray | None = None  # (k,) float seconds of each attention check's clip
    # The words' texts, for the drill-down's per-word figures: word_codes (clips x width) int32 indexes
    # `vocabulary` (sorted word keys, evaluation.stats.drilldown.word_key), -1 past a clip's last word
    # or where the text is unknown; None: no texts known.
    vocabulary: tuple[str, ...] = ()
    word_codes: np.ndarray | None = None

    def __post_init__(self):
        for name, size in (("clip_durations", len(self.clip_keys)), ("check_durations", self.check_annotator.size)):
            value = getattr(self, name)
            value = np.full(size, np.nan) if value is None else np.asarray(value, dtype=np.float64)
            if value.shape != (size,):
                raise ValueError(f"{name} must have one value per {'clip' if name == 'clip_durations' else 'check'}")
            object.__setattr__(self, name, value)

    @classmethod
    def build(
        cls,
        *,
        study: str,
        clips: dict[str, dict],
        annotations: list[tuple],
        checks: Sequence[tuple] = (),
        notes: dict[str, int] | None = None,
    ) -> "StudyData":
        """clips: key -> {"words": int, "language": str, "variety": str, "emotion": str, "duration": float,
        "texts": [str] (optional: the words' texts, in order)};
        annotations: (clip key, annotator key, levels, mismatch, seconds);
        checks: (annotator key, passed, seconds[, duration of the check's clip]).
        A duration left out is unknown (NaN)."""
        clip_keys = tuple(sorted(clips))
        clip_index = {key: i for i, key in enumerate(clip_keys)}
        annotator_keys = tuple(sorted({row[1] for row in annotations} | {row[0] for row in checks}))
        annotator_index = {key: i for i, key in enumerate(annotator_keys)}
        words = np.array([int(clips[key]["words"]) for key in clip_keys], dtype=np.int64)
        rows = sorted(annotations, key=lambda row: (clip_index[row[0]], annotator_index[row[1]]))
        width = int(words.max()) if words.size else 0
        levels = np.full((len(rows), width), -1, dtype=np.int8)
        for i, row in enumerate(rows):
            levels[i, : len(row[2])] = row[2]
        check_rows = sorted(
            checks, key=lambda row: (annotator_index[row[0]], bool(row[1]), float(row[2]), _sortable(row[3:]))
        )
        return cls.from_arrays(
            study=study,
            clip_keys=clip_keys,
            clip_groups={d: tuple(str(clips[key].get(d) or "") for key in clip_keys) for d in DIMENSIONS},
            clip_words=words,
            annotator_keys=annotator_keys,
            clip=np.array([clip_index[row[0]] for row in rows], dtype=np.int64),
            annotator=np.array([annotator_index[row[1]] for row in rows], dtype=np.int64),
            levels=levels,
            mismatch=np.array([bool(row[3]) for row in rows], dtype=bool),
            seconds=np.array([float(row[4]) for row in rows], dtype=np.float64),
            check_annotator=np.array([annotator_index[row[0]] for row in check_rows], dtype=np.int64),
            check_passed=np.array([bool(row[1]) for row in check_rows], dtype=bool),
            check_seconds=np.array([float(row[2]) for row in check_rows], dtype=np.float64),
            notes=dict(notes or {}),
            clip_durations=np.array([_duration([clips[key].get("duration")]) for key in clip_keys], dtype=np.float64),
            check_durations=np.array([_duration(row[3:]) for row in check_rows], dtype=np.float64),
            **_word_codes([clips[key].get("texts") for key in clip_keys], width),
        )

    @classmethod
    def from_arrays(cls, **fields) -> "StudyData":
        """Validate arrays that are already in canonical order (clip keys and annotator keys sorted)."""
        data = cls(**fields)
        if data.word_codes is not None and (
            data.word_codes.shape != (len(data.clip_keys), data.levels.shape[1])
            or (data.word_codes.size and int(data.word_codes.max()) >= len(data.vocabulary))
        ):
            raise ValueError("word_codes must be (clips x levels' width) indexes into vocabulary")
        if list(data.clip_keys) != sorted(set(data.clip_keys)) or list(data.annotator_keys) != sorted(
            set(data.annotator_keys)
        ):
            raise ValueError("clip and annotator keys must be unique and sorted")
        order = np.lexsort((data.annotator, data.clip))
        if np.any(order != np.arange(order.size)):
            raise ValueError("annotations must be sorted by clip, then annotator")
        data.ratings()  # checks levels, words and duplicates
        return data

    @property
    def n_annotations(self) -> int:
        return int(self.clip.size)

    def ratings(self, rows: np.ndarray | None = None) -> Ratings:
        rows = np.ones(self.n_annotations, dtype=bool) if rows is None else rows
        return Ratings.build(
            clip=self.clip[rows],
            annotator=self.annotator[rows],
            levels=self.levels[rows],
            clip_words=self.clip_words,
            n_annotators=len(self.annotator_keys),
        )


def _word_codes(texts: list, width: int) -> dict:
    """vocabulary and word_codes of StudyData from each clip's texts (None where unknown)."""
    if all(words is None for words in texts):
        return {}
    vocabulary = tuple(sorted({word_key(text) for words in texts for text in words or ()}))
    index = {key: i for i, key in enumerate(vocabulary)}
    codes = np.full((len(texts), width), -1, dtype=np.int32)
    for row, words in enumerate(texts):
        for column, text in enumerate((words or ())[:width]):
            codes[row, column] = index[word_key(text)]
    return {"vocabulary": vocabulary, "word_codes": codes}


def _duration(values) -> float:
    """The first of `values` as seconds, NaN when absent or None."""
    return float(values[0]) if len(values) and values[0] is not None else float("nan")


def _sortable(values) -> float:
    """A duration as a sort key: unknown (NaN) first, so that the order never depends on input order."""
    duration = _duration(values)
    return -1.0 if math.isnan(duration) else duration
