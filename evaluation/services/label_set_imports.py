"""label_set_import: a published dataset with per-clip labels (EmphAssess, TinyStress-15K,
StressTest) as a corpus and a label set, with its provenance.

1. read and check every record (evaluation.ingest.emphasis_datasets) and find its audio in the
   folder the researcher points to (nothing is downloaded);
2. import the clips through the corpus import (annotation.services.dataset_clips);
3. write the set's rows (binary labels only: these datasets have no annotators, so no levels
   and no scalar label), finalize it, and record where its labels come from (`label_source`,
   `label_kind`, `source`), in one transaction; stored files are deleted if it fails.

A bad record refuses the whole import, every bad record named, unless the researcher asks to
skip them (`skip_invalid`): then the others are imported and each skipped record is listed
with its reason in the set's `source["skipped"]` (file and line or row, clip, field, reason),
those the corpus import refuses (audio that cannot be decoded) as well. A file that cannot be
read at all, or a split choice the layout cannot answer, refuses the import either way.
Embedded audio (Parquet, save_to_disk) is written to a temporary folder that lives as long as
the import.

Splits: "given" takes the layout's (the Hugging Face split files), "assign" draws them per
language as a label-set build does (seeded proportions), a split name puts every clip in it
(EmphAssess as a test set only, as MMEE's Table 3 uses it).
"""

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation.ingest.dataset_clips import DatasetProblem
from annotation.ingest.errors import ImportRefused
from annotation.models import Study, Word
from annotation.services.corpus_import import limits_from_settings
from annotation.services.dataset_clips import dataset_clips_import
from evaluation.ingest.emphasis_datasets import FORMATS, DatasetDraft, LabelledClip, read_dataset
from evaluation.models import LabelSet, LabelSetClip
from evaluation.services.label_sets import (
    LabelSetRefused,
    label_set_build,
    label_set_create,
    label_set_default_parameters,
    label_set_finalize,
    label_set_summary,
)
from evaluation.stats.label_sets import (
    DEFAULT_PROPORTIONS,
    SCALE_STEPS,
    SplitClip,
    SplitRefused,
    assign_splits,
    scale_steps,
)

SPLIT_MODES = ("given", "assign", "train", "validation", "test")


def label_set_import(
    *,
    format_key: str,
    path: Path,
    audio_folder: Path | None,
    name: str,
    corpus_name: str | None = None,
    splits: str = "given",
    split_seed: int = 0,
    label_source: str | None = None,
    finalize: bool = True,
    audio_named: str = "",
    skip_invalid: bool = False,
    user=None,
) -> LabelSet:
    """The new label set (the next version of `name`), final unless finalize=False; ImportRefused
    naming every bad record, LabelSetRefused for a choice that does not fit."""
    if format_key not in FORMATS:
        raise LabelSetRefused(f"unknown dataset format {format_key!r}; one of {', '.join(FORMATS)}")
    if splits not in SPLIT_MODES:
        raise LabelSetRefused(f"unknown splits {splits!r}; one of {', '.join(SPLIT_MODES)}")
    source = label_source or FORMATS[format_key].label_source
    if source not in LabelSet.LabelSource.values:
        raise LabelSetRefused(f"unknown label source {source!r}; one of {', '.join(LabelSet.LabelSource.values)}")
    if not name.strip():
        raise LabelSetRefused("a label set needs a name")
    folder = Path(audio_folder) if audio_folder is not None else None
    with tempfile.TemporaryDirectory(prefix="dataset-audio-") as extracted:
        draft = read_dataset(format_key, Path(path), folder, limits_from_settings(), Path(extracted))
        skipped = _refuse_or_skip(draft, splits, skip_invalid)
        choice = _Choice(name.strip(), corpus_name or FORMATS[format_key].dataset, source, splits, split_seed)
        audio = audio_named or (str(folder) if folder else "embedded in the files")
        return _import(draft, choice, skipped, skip_invalid, audio, finalize, user)


@dataclass(frozen=True)
class _Choice:
    name: str
    corpus_name: str
    label_source: str
    splits: str
    seed: int


def _refuse_or_skip(draft: DatasetDraft, splits: str, skip_invalid: bool) -> list[DatasetProblem]:
    """The records skipped (each problem's record is left out of draft.rows already); ImportRefused
    if any problem is not to be skipped, or nothing is left."""
    problems = sorted(list(draft.problems) + _split_problems(draft, splits), key=lambda problem: problem.order)
    refused = [problem for problem in problems if not (skip_invalid and problem.skippable)]
    if refused:
        raise ImportRefused(", ".join(draft.files), refused)
    if not draft.rows:
        raise LabelSetRefused(f"no record of {', '.join(draft.files)} could be imported ({len(problems)} skipped)")
    return problems


def _import(draft, choice: _Choice, skipped, skip_invalid, audio, finalize, user) -> LabelSet:
    """Write the corpus and the set; with skip_invalid, the records the corpus import refuses
    (audio it cannot decode) are skipped too, and the rest written on a second try."""
    try:
        return _write_all(draft, choice, skipped, audio, finalize, user)
    except ImportRefused as refused:
        if not skip_invalid or any(not problem.skippable for problem in refused.problems):
            raise
        undecodable = refused.problems
    bad = {problem.clip_id for problem in undecodable}
    skipped = sorted(skipped + undecodable, key=lambda problem: problem.order)
    draft.rows = [row for row in draft.rows if row.clip.clip_id not in bad]
    if not draft.rows:
        raise LabelSetRefused(f"no record of {', '.join(draft.files)} could be imported ({len(skipped)} skipped)")
    return _write_all(draft, choice, skipped, audio, finalize, user)


def _write_all(draft, choice: _Choice, skipped, audio, finalize, user) -> LabelSet:
    split_of = _splits(draft.rows, choice.splits, choice.seed)
    stored: list[str] = []
    try:
        with transaction.atomic():
            clips = dataset_clips_import(
                drafts=[row.clip for row in draft.rows],
                corpus_name=choice.corpus_name,
                file_name=", ".join(draft.files),
                stored=stored,
            )
            label_set = _write(draft, clips, split_of, choice, audio, skipped, user)
            if finalize:
                label_set = label_set_finalize(label_set=label_set, user=user)
            return label_set
    except BaseException:
        for stored_name in stored:
            default_storage.delete(stored_name)
        raise


def _split_problems(draft: DatasetDraft, splits: str) -> list[DatasetProblem]:
    if splits != "given":
        return []
    # A choice to make, not a bad record: skipping would leave out every record of the file.
    return [
        replace(
            row.clip.problem("split", 'the layout names no split for this record; choose --splits "assign" or a split'),
            skippable=False,
        )
        for row in draft.rows
        if not row.split
    ]


def _splits(rows: list[LabelledClip], splits: str, seed: int) -> dict[str, str]:
    if splits == "given":
        return {row.clip.clip_id: row.split for row in rows}
    if splits != "assign":
        return {row.clip.clip_id: splits for row in rows}
    clips = [SplitClip(row.clip.clip_id, row.clip.language, "", row.clip.speaker) for row in rows]
    try:
        return assign_splits(clips, seed=seed, proportions=DEFAULT_PROPORTIONS)
    except SplitRefused as refused:
        raise LabelSetRefused(str(refused)) from None


def _write(draft, clips, split_of, choice: _Choice, audio_folder, skipped, user) -> LabelSet:
    name, splits, seed = choice.name, choice.splits, choice.seed
    train = [
        SplitClip(row.clip.clip_id, row.clip.language, "", row.clip.speaker)
        for row in draft.rows
        if split_of[row.clip.clip_id] == "train"
    ]
    steps = scale_steps(train, seed=seed, steps=SCALE_STEPS)
    latest = LabelSet.objects.select_for_update().filter(name=name).aggregate(latest=Max("version"))["latest"]
    now = timezone.now()
    label_set = LabelSet.objects.create(
        name=name,
        version=(latest or 0) + 1,
        parameters={
            "splits": splits,
            "split_seed": seed,
            "proportions": list(DEFAULT_PROPORTIONS) if splits == "assign" else [],
            "scale_steps": list(SCALE_STEPS),
        },
        label_source=choice.label_source,
        label_kind=LabelSet.LabelKind.BINARY,
        source={
            "dataset": draft.format.dataset,
            "format": draft.format.key,
            "files": draft.files,
            "sha256": draft.sha256,
            "audio_folder": str(audio_folder),
            "skipped": [problem.as_dict() for problem in skipped],
        },
        status=LabelSet.Status.SUCCEEDED,
        phase="imported",
        started_at=now,
        finished_at=now,
        created_by=user if user is not None and user.is_authenticated else None,
    )
    ordered = sorted(draft.rows, key=lambda row: row.clip.clip_id)
    words = _words_by_clip([clip.pk for clip in clips.values()])
    rows = [
        _row(label_set, position, row, clips[row.clip.clip_id], words, split_of[row.clip.clip_id], steps)
        for position, row in enumerate(ordered)
    ]
    LabelSetClip.objects.bulk_create(rows, batch_size=2000)
    label_set.summary = _summary(rows)
    label_set.save(update_fields=["summary"])
    return label_set


def _words_by_clip(clip_ids: list[int]) -> dict[int, list[Word]]:
    words: dict[int, list[Word]] = {pk: [] for pk in clip_ids}
    for word in Word.objects.filter(clip_id__in=clip_ids).order_by("clip_id", "index").iterator(chunk_size=10000):
        words[word.clip_id].append(word)
    return words


def _row(label_set, position, row: LabelledClip, clip, words_by_clip, split: str, steps: dict) -> LabelSetClip:
    marked = set(row.marked)
    words = [
        {
            "index": index,
            "text": word.text,
            "start": word.start,
            "end": word.end,
            "binary": index in marked,
            "scalar": None,  # no annotators: a binary label and nothing to average
            "levels": [],
        }
        for index, word in enumerate(words_by_clip[clip.pk])
    ]
    return LabelSetClip(
        label_set=label_set,
        position=position,
        clip=clip,
        study=None,
        clip_key=clip.external_id,
        split=split,
        language=clip.language,
        variety=clip.variety,
        speaker=clip.speaker.name if clip.speaker else "",
        emotion=clip.emotion,
        arousal="",
        scale_step=steps.get(clip.external_id),
        duration=clip.duration,
        annotators=[],
        words=words,
    )


def _summary(rows: list[LabelSetClip]) -> dict:
    """A built set's summary, with the share of words the dataset marks: no annotations, nothing left out."""
    summary = label_set_summary(rows, left_out={}, agreement={})
    return {**summary, "emphasized_words": sum(word["binary"] for row in rows for word in row.words)}


def crowd_label_set_make(*, study: Study, name: str, user=None) -> LabelSet:
    """A final label set of an imported crowd study (annotation.services.crowd_study_import), built
    here and now with every annotation kept (the release has no fixed number per clip); the
    rejected annotators are left out, as from any study, and counted in its summary."""
    parameters = label_set_default_parameters(studies=[study], subsample=None)
    label_set = label_set_create(name=name, studies=[study], parameters=parameters, user=user, enqueue=False)
    label_set_build(label_set_id=label_set.pk)
    label_set.refresh_from_db()
    if label_set.status != LabelSet.Status.SUCCEEDED:
        raise LabelSetRefused(f"{label_set} could not be built: {label_set.error}")
    return label_set_finalize(label_set=label_set, user=user)


def crowd_label_set_step(*, name: str | None, user=None) -> Callable[[Study], LabelSet] | None:
    """crowd_label_set_make as crowd_study_import's `then` (None without a name): run inside the
    import's transaction, so that a set that cannot be built leaves nothing of the import."""
    if not name:
        return None
    return lambda study: crowd_label_set_make(study=study, name=name, user=user)
