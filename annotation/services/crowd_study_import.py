"""crowd_study_import: a published crowd's annotations as a closed, binary emphasis study.

Morrison et al.'s LibriTTS prominence annotations (annotation.ingest.morrison_annotations) come
in as what they are: raw annotations by anonymised annotators, one 0/1 per word. Their clips go
through the corpus import; each annotator becomes a participant (named MORRISON-<their id>,
their language and country kept as screening answers) with one completed task holding their
items, and each item an annotation whose levels are the scores (1: emphasized). The agreement
report, the label set and the review page then read the study as any other.

The emphases project's annotator filters are decisions here: an annotator who breaks one is
rejected, with the rule in the decision note, so that every report and label set leaves their
annotations out and counts them. `apply_filters=False` keeps everyone.

Atomic: a bad record refuses the whole import (every bad record named), and files stored before
a failure are deleted. With `skip_invalid` the bad items are left out instead (an annotator left
with none is left out too) and each is listed in the report's `skipped`; a file that is not the
release's JSON is refused either way. `then(study)`, if given, runs inside the same transaction once the study
is written (evaluation passes the label set's build, so that this floor need not know it): if it
raises, nothing of the import is kept and its stored files are deleted too; what it returns is
the report's `made`.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from annotation.ingest.dataset_clips import DatasetProblem
from annotation.ingest.errors import ImportRefused
from annotation.ingest.morrison_annotations import DATASET, CrowdDraft, annotator_filter_reasons, read_morrison
from annotation.models import Annotation, Corpus, Participant, Study, StudyItem, Task, TaskItem
from annotation.services.corpus_import import limits_from_settings
from annotation.services.dataset_clips import dataset_clips_import
from annotation.services.studies import free_slug

PID_PREFIX = "MORRISON-"
NOTE = "Imported annotator of {dataset} ({file})."


@dataclass
class CrowdImportReport:
    study: Study
    clips: int
    annotators: int
    annotations: int
    rejected: dict[str, list[str]]  # participant name -> the filters they broke
    made: object = None  # what `then` returned (a label set)
    skipped: list[DatasetProblem] = field(default_factory=list)  # with skip_invalid: the items left out

    def as_dict(self) -> dict:
        return {
            "study": self.study.slug,
            "clips": self.clips,
            "annotators": self.annotators,
            "annotations": self.annotations,
            "rejected": self.rejected,
            "skipped": [problem.as_dict() for problem in self.skipped],
        }


def crowd_study_import(
    *,
    path: Path,
    audio_folder: Path,
    study_name: str,
    corpus_name: str | None = None,
    apply_filters: bool = True,
    then: Callable[[Study], object] | None = None,
    skip_invalid: bool = False,
) -> CrowdImportReport:
    if Study.objects.filter(name=study_name).exists():
        raise ImportRefused(path.name, [_study_exists(study_name)])
    draft = read_morrison(Path(path), Path(audio_folder), limits_from_settings())
    problems = sorted(draft.problems, key=lambda problem: problem.order)
    refused = [problem for problem in problems if not (skip_invalid and problem.skippable)]
    if refused:
        raise ImportRefused(draft.file, refused)
    draft.annotators = [annotator for annotator in draft.annotators if annotator.items]
    if not draft.clips or not draft.annotators:
        raise ImportRefused(draft.file, [_nothing_left(draft.file, len(problems))])
    corpus_name = corpus_name or study_name
    stored: list[str] = []
    try:
        with transaction.atomic():
            clips = dataset_clips_import(
                drafts=list(draft.clips.values()), corpus_name=corpus_name, file_name=draft.file, stored=stored
            )
            report = _write(draft, clips, study_name, Corpus.objects.get(name=corpus_name), apply_filters)
            report.skipped = problems
            if then is not None:
                report.made = then(report.study)
            return report
    except BaseException:
        for name in stored:
            default_storage.delete(name)
        raise


def _nothing_left(file: str, skipped: int) -> DatasetProblem:
    return DatasetProblem(0, file, "", "", f"no item could be imported ({skipped} skipped)", skippable=False)


def _study_exists(name: str) -> DatasetProblem:
    return DatasetProblem(
        0, "--study", "", "name", f"a study named {name!r} exists already; choose another name", False
    )


def _write(draft: CrowdDraft, clips: dict, study_name: str, corpus: Corpus, filters: bool) -> CrowdImportReport:
    counts = _annotations_per_clip(draft.annotators)
    reasons_of = {
        annotator.key: (
            annotator_filter_reasons([scores for _, scores in annotator.items], given=annotator.given)
            if filters
            else []
        )
        for annotator in draft.annotators
    }
    # A clip's count holds the annotations that count, as a rejection leaves it (annotation.services.review).
    counted = _annotations_per_clip([annotator for annotator in draft.annotators if not reasons_of[annotator.key]])
    study = Study.objects.create(
        name=study_name,
        slug=free_slug(study_name),
        corpus=corpus,
        kind=Study.Kind.EMPHASIS,
        scale=Study.Scale.BINARY,
        status=Study.Status.CLOSED,
        language="en",
        target_annotations=max(counts.values()),
        attention_checks_per_task=0,
        selection={"imported": {"dataset": DATASET, "format": "morrison", "file": draft.file, "sha256": draft.sha256}},
    )
    created = StudyItem.objects.bulk_create(
        StudyItem(study=study, clip=clips[stem], completed_count=counted.get(stem, 0)) for stem in clips
    )
    items = dict(zip(clips, created, strict=True))
    now = timezone.now()
    rejected: dict[str, list[str]] = {}
    annotations = 0
    note = NOTE.format(dataset=DATASET, file=draft.file)
    for annotator in draft.annotators:
        reasons = reasons_of[annotator.key]
        participant = Participant.objects.create(
            study=study,
            prolific_pid=f"{PID_PREFIX}{annotator.key}",
            consented_at=now,
            screened_at=now,
            completed_at=now,
            screening_answers={"language": annotator.language, "country": annotator.country},
            decision=Participant.Decision.REJECTED if reasons else Participant.Decision.PENDING,
            decision_note=note
            + (" Left out by the emphases project's filters: " + "; ".join(reasons) if reasons else ""),
        )
        if reasons:
            rejected[participant.prolific_pid] = reasons
        annotations += _annotations(study, participant, annotator.items, clips, items, now)
    return CrowdImportReport(study, len(clips), len(draft.annotators), annotations, rejected)


def _annotations_per_clip(annotators) -> dict[str, int]:
    counts: dict[str, int] = {}
    for annotator in annotators:
        for stem, _ in annotator.items:
            counts[stem] = counts.get(stem, 0) + 1
    return counts


def _annotations(study, participant, annotator_items, clips, items, now) -> int:
    task = Task.objects.create(
        participant=participant, study=study, status=Task.Status.COMPLETED, expires_at=now, completed_at=now
    )
    task_items = TaskItem.objects.bulk_create(
        TaskItem(
            task=task,
            position=position,
            clip=clips[stem],
            study_item=items[stem],
            word_count=len(scores),
            duration=clips[stem].duration,
            status=TaskItem.Status.SUBMITTED,
        )
        for position, (stem, scores) in enumerate(annotator_items)
    )
    Annotation.objects.bulk_create(
        Annotation(
            item=task_item,
            participant=participant,
            clip=task_item.clip,
            levels=scores,
            coverage=1.0,  # not recorded in the release; the crowd heard each clip to mark it
            seconds_spent=task_item.duration,
        )
        for task_item, (_, scores) in zip(task_items, annotator_items, strict=True)
    )
    return len(task_items)
