"""Database reads for label sets: the clips' words and details for a build, and a set's rows."""

from collections.abc import Iterator
from dataclasses import dataclass

from annotation.models import Clip, Study, Word
from evaluation.models import LabelSetClip

ROW_FIELDS = (
    "clip_key",
    "study__slug",
    "split",
    "language",
    "variety",
    "speaker",
    "emotion",
    "arousal",
    "scale_step",
    "duration",
    "annotators",
    "words",
    "annotator_reliability",
)


@dataclass(frozen=True)
class ClipDetail:
    pk: int
    language: str
    variety: str
    speaker: str
    emotion: str
    duration: float
    words: list[tuple[str, float | None, float | None]]  # (text, start, end) by word index


def clip_details(*, study: Study, clip_keys: list[str]) -> dict[str, ClipDetail]:
    """Clip external id -> what a label-set row needs, for clips of the study's items."""
    clips = Clip.objects.filter(study_items__study=study, external_id__in=clip_keys).values_list(
        "pk", "external_id", "language", "variety", "speaker__name", "emotion", "duration"
    )
    details = {}
    words: dict[int, list] = {}
    ids = []
    for pk, key, language, variety, speaker, emotion, duration in clips:
        ids.append(pk)
        words[pk] = []
        details[key] = ClipDetail(pk, language, variety, speaker or "", emotion, duration, words[pk])
    for clip_id, text, start, end in (
        Word.objects.filter(clip_id__in=ids).order_by("clip_id", "index").values_list("clip_id", "text", "start", "end")
    ).iterator(chunk_size=10000):
        words[clip_id].append((text, start, end))
    return details


def label_set_rows(*, label_set_id: int, chunk_size: int = 2000) -> Iterator[dict]:
    """The set's clip rows in order, as plain dicts (evaluation.reports.label_set_files), streamed."""
    rows = LabelSetClip.objects.filter(label_set_id=label_set_id).order_by("position").values_list(*ROW_FIELDS)
    for values in rows.iterator(chunk_size=chunk_size):
        row = dict(zip(ROW_FIELDS, values))
        row["clip_id"] = row.pop("clip_key")
        row["study"] = row.pop("study__slug")
        if row["annotator_reliability"] is None:
            # A set without an annotator model has rows as before it existed (same checksum).
            del row["annotator_reliability"]
        yield row
