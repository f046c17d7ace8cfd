"""Detection runs: a benchmark run's trained detector over a listening form's stressed_words items
(StressTest SSD) or a CAST set's renditions, its per-word predictions stored as the outputs of a
benchmark system of kind "detector".

- `detection_run_create` (the web side: admin, API) checks and queues a run for a GPU worker;
- `detection_run_predict` (the worker's side, called by modelzoo.tasks inside the task's body)
  claims it through annotation.shared.jobs, loads the detector from the source run's stored checkpoint
  with modelzoo.training.detectors.load_detector (what the benchmark saved it for), predicts and
  stores. The training stack is imported inside the worker's functions only: web processes import
  this module to launch, never torch.
"""

import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from annotation.models import Clip, ListeningFormItem, Study, Word
from annotation.refusals import Refused
from annotation.shared.jobs import JobFailed, JobLost, job_enqueue, job_run
from evaluation.models import CastRendition, CastSet, RenditionDetection, System, SystemOutput
from modelzoo.models import BenchmarkRun, DetectionRun

Status = DetectionRun.Status
_CHUNK = 1024 * 1024


class DetectionRefused(Refused, ValueError):
    """A run that cannot be launched as asked; the message says why."""


def detection_run_create(
    *,
    source_run: BenchmarkRun,
    study: Study | None = None,
    cast_set: CastSet | None = None,
    language: str = "",
    user=None,
) -> DetectionRun:
    """A queued run of `source_run`'s detector over one target (a listening-form study or a CAST
    set), sent to the `gpu` queue once this transaction commits. Refused: a source run that has not
    succeeded or has no checkpoint, or was trained for the scalar label only; no target or two; a
    target with no clips to run over."""
    source_run_check(source_run)
    if (study is None) == (cast_set is None):
        raise DetectionRefused("choose one target: a listening-form study or a CAST set")
    if study is not None:
        if not study.capabilities.answers_are_choices:
            raise DetectionRefused(f"{study} is not a listening form: detectors run over a form's stressed_words items")
        if not _form_items(study):
            raise DetectionRefused(f"{study} has no stressed_words items to run a detector over")
    elif cast_set is not None and not _renditions(cast_set).exists():
        raise DetectionRefused(f"the CAST set {cast_set} has no renditions to run a detector over")
    created_by = user if user is not None and user.is_authenticated else None
    with transaction.atomic():
        run = DetectionRun.objects.create(
            source_run=source_run, study=study, cast_set=cast_set, language=language.strip(), created_by=created_by
        )
        job_enqueue(run)
    return run


def source_run_check(source_run: BenchmarkRun) -> None:
    if source_run.status != BenchmarkRun.Status.SUCCEEDED or not source_run.checkpoint:
        state = "cancelled" if source_run.cancelled else source_run.status
        raise DetectionRefused(f"benchmark run {source_run.pk} is {state}: only a succeeded run has a trained detector")
    if source_run.label_mode == BenchmarkRun.LabelMode.SCALAR:
        raise DetectionRefused(
            f"benchmark run {source_run.pk} was trained for the scalar label only: its binary predictions (stressed "
            "or not) mean nothing; use a run trained in binary or both modes"
        )


def system_name(source_run: BenchmarkRun) -> str:
    """The detector's name as a benchmark system, e.g. "acoustic #12 (tiny v1)"."""
    return f"{source_run.detector} #{source_run.pk} ({source_run.label_set})"[:200]


def system_metadata(source_run: BenchmarkRun) -> dict:
    return {
        "source_run": source_run.pk,
        "detector": source_run.detector,
        "backbone": (source_run.details or {}).get("backbone") or source_run.backbone or None,
        "label_set": str(source_run.label_set),
        "label_set_id": source_run.label_set_id,
        "label_mode": source_run.label_mode,
        "setting": source_run.setting_label,
    }


def _form_items(study: Study) -> list[ListeningFormItem]:
    """The study's stressed_words items, attention checks left out (answered by everyone, never scored)."""
    items = ListeningFormItem.objects.filter(study=study, item_type=ListeningFormItem.Type.STRESSED_WORDS).order_by(
        "pk"
    )
    return [item for item in items if not item.is_attention_check]


def _renditions(cast_set: CastSet):
    return CastRendition.objects.filter(item__cast_set=cast_set)


# --- the worker's side ---


def detection_run_predict(*, run_id: int) -> None:
    job_run(model=DetectionRun, job_id=run_id, work=_predict)


@dataclass(frozen=True)
class Target:
    """One item or rendition to give a prediction: its row and the clip it is about."""

    row: ListeningFormItem | CastRendition
    clip_id: int


def _predict(run: DetectionRun, progress) -> dict:
    from modelzoo.training.alignment import AlignmentFailed, WordTimesMissing
    from modelzoo.training.checkpoints import CheckpointMissing

    source = run.source_run
    try:
        source_run_check(source)
    except DetectionRefused as refusal:
        raise JobFailed(str(refusal)) from None
    targets = _targets(run)
    if not targets:
        raise JobFailed(f"{run.target_label} has nothing to run a detector over")
    with tempfile.TemporaryDirectory(prefix=f"detection-{run.pk}-") as folder:
        scratch = Path(folder)
        clips = clips_for(sorted({target.clip_id for target in targets}), scratch / "audio", run.language, progress)
        try:
            detector = load_checkpoint(source, scratch / "model", progress)
            predictions = detector.predict(list(clips.values()), progress)
        except CheckpointMissing as error:
            raise JobFailed(f"{error} (MODELZOO_CHECKPOINT_DIR is {settings.MODELZOO_CHECKPOINT_DIR})") from None
        except (WordTimesMissing, AlignmentFailed, ValueError, FileNotFoundError) as error:
            raise JobFailed(str(error)) from None
    stressed = {}
    for clip, prediction in zip(clips.values(), predictions, strict=True):
        if prediction.clip_id != clip.clip_id or len(prediction.binary) != len(clip.words):
            raise JobFailed(f"the detector's predictions for clip {clip.clip_id} do not match its words")
        stressed[int(clip.clip_id)] = [index for index, value in enumerate(prediction.binary) if value]
    progress("storing the predictions", 0, 1)  # JobLost here if this worker no longer holds the run
    system = detection_predictions_store(run, targets, stressed)
    return {
        "system": system,
        "outputs_count": len(targets),
        "clips_count": len(clips),
        "words_count": sum(len(clips[t.clip_id].words) for t in targets),
        "stressed_count": sum(len(stressed[t.clip_id]) for t in targets),
    }


def _targets(run: DetectionRun) -> list[Target]:
    if run.study is not None:
        return [Target(row, row.clip_id) for row in _form_items(run.study)]
    if run.cast_set is None:
        raise JobFailed("a detection run needs its listening-form study or its CAST set")
    return [Target(row, row.clip_id) for row in _renditions(run.cast_set).order_by("pk")]


def clips_for(clip_ids: list[int], folder: Path, language: str, progress) -> dict:
    """clip id -> modelzoo.training.data.Clip (its id the annotation clip's pk as text), its 16 kHz
    audio copied into `folder`, its words with their times where the corpus has them (a detector
    that needs times aligns the rest, or refuses them). Word labels are unknown here: 0."""
    from modelzoo.training.data import Clip as ModelClip
    from modelzoo.training.data import Word as ModelWord

    words: dict[int, list[ModelWord]] = {pk: [] for pk in clip_ids}
    for clip_id, text, start, end in (
        Word.objects.filter(clip_id__in=clip_ids)
        .order_by("clip_id", "index")
        .values_list("clip_id", "text", "start", "end")
    ):
        words[clip_id].append(ModelWord(text, start, end, binary=0, scalar=0.0))
    clips = {}
    rows = (
        Clip.objects.filter(pk__in=clip_ids).order_by("pk").values_list("pk", "external_id", "language", "model_audio")
    )
    for done, (pk, external_id, clip_language, audio) in enumerate(rows, start=1):
        if not words[pk]:
            raise JobFailed(f"clip {external_id!r} has no words to mark")
        path = folder / f"{pk}.wav"
        _copy_stored(audio, path, f"the 16 kHz audio of clip {external_id!r}")
        clips[pk] = ModelClip(
            clip_id=str(pk), language=clip_language or language, split="test", words=tuple(words[pk]), audio_path=path
        )
        progress("copying audio", done, len(clip_ids))
    return clips


def _copy_stored(name: str, target: Path, what: str) -> None:
    if not name or not default_storage.exists(name):
        raise JobFailed(f"{what} is missing from storage ({name or 'no file'})")
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(name, "rb") as source, target.open("wb") as copy:
        shutil.copyfileobj(source, copy, _CHUNK)


def load_checkpoint(source_run: BenchmarkRun, folder: Path, progress):
    """The detector `source_run` trained: its stored checkpoint zip unpacked into `folder` and
    loaded with load_detector, as the benchmark saved it."""
    from modelzoo.training.detectors import load_detector

    progress("loading the detector", 0, 1)
    archive = folder.with_suffix(".zip")
    _copy_stored(source_run.checkpoint.name, archive, f"benchmark run {source_run.pk}'s checkpoint")
    with zipfile.ZipFile(archive) as bundle:
        bundle.extractall(folder)  # written by our own worker; extractall keeps every entry inside folder
    archive.unlink()
    detector = load_detector(folder, checkpoint_dir=settings.MODELZOO_CHECKPOINT_DIR)
    progress("loading the detector", 1, 1)
    return detector


def detection_predictions_store(run: DetectionRun, targets: list[Target], stressed: dict[int, list[int]]) -> System:
    """The predictions as the outputs of the source run's System, replacing what that system had
    for this target, in one transaction that first checks this attempt still holds the run (on
    PostgreSQL the check locks the run's row until the commit, so no sweep re-queues it meanwhile)."""
    source = run.source_run
    with transaction.atomic():
        held = DetectionRun.objects.filter(pk=run.pk, status=Status.RUNNING, attempts=run.attempts)
        if not held.update(heartbeat_at=timezone.now()):
            raise JobLost
        system, _ = System.objects.get_or_create(name=system_name(source), defaults={"kind": System.Kind.DETECTOR})
        if system.kind != System.Kind.DETECTOR:
            raise JobFailed(f"a system named {system.name!r} exists and is a {system.kind}, not a detector")
        system.metadata = system_metadata(source)
        system.save(update_fields=["metadata"])
        if run.study_id is not None:
            SystemOutput.objects.filter(system=system, form_item__study=run.study).delete()
            SystemOutput.objects.bulk_create(
                SystemOutput(
                    system=system,
                    suite=SystemOutput.Suite.STRESSTEST,
                    form_item=target.row,
                    pole_order="",
                    raw=stressed[target.clip_id],
                    line=0,
                )
                for target in targets
                if isinstance(target.row, ListeningFormItem)  # all of them, for a study's run
            )
        else:
            RenditionDetection.objects.filter(detector=system, rendition__item__cast_set=run.cast_set).delete()
            RenditionDetection.objects.bulk_create(
                RenditionDetection(rendition=target.row, detector=system, stressed=stressed[target.clip_id])
                for target in targets
                if isinstance(target.row, CastRendition)  # all of them, for a CAST set's run
            )
    return system
