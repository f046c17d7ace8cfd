"""The demo study's simulated crowd: annotations from simulated annotators, so that a fresh
`make run` has an agreement report, a label set and benchmarks to show rather than pages of
"undefined" (one person trying the demo gives one annotation a clip, and agreement needs two).

The annotators are labelled as what they are wherever a participant shows: their Prolific id is
"SIMULATED-<n>" and their decision note says where they came from. Their marks follow the model of
evaluation.stats.simulation (each annotator hears the words the demo's generator stressed, with
their own noise and threshold), within the study's limits on marked words. Rows are written
directly, one bulk insert a table (a fraction of a second, in `make run`), as completed tasks.
"""

import numpy as np
from django.db import transaction
from django.db.models import Count, F
from django.utils import timezone

from annotation.models import Annotation, Participant, Study, Task, TaskItem
from annotation.services.gates import max_marks
from evaluation.stats.simulation import simulated_crowd

SIMULATED_PID = "SIMULATED-{:03d}"
NOTE = "Simulated annotator of the demo (evaluation/services/demo_crowd.py), not a person."


def demo_crowd_seed(*, study: Study, per_clip: int = 3, seed: int = 0) -> int:
    """Give every clip of the study `per_clip` simulated annotations, once (nothing if the study
    has its crowd already). How many annotations were written."""
    if study.participants.filter(prolific_pid__startswith="SIMULATED-").exists():
        return 0
    items = list(
        study.items.filter(form_item__isnull=True)
        .select_related("clip")
        .annotate(word_total=Count("clip__words"))
        .order_by("pk")
    )
    if not items:
        return 0
    rows = simulated_crowd(
        word_counts=[item.word_total for item in items],
        intended=[item.clip.metadata.get("intended_emphasis", []) for item in items],
        most_marked=[
            max_marks(
                word_count=item.word_total, min_marked=study.min_marked_words, max_fraction=study.max_marked_fraction
            )
            for item in items
        ],
        per_clip=per_clip,
        clips_per_task=study.clips_per_task,
        seed=seed,
    )
    with transaction.atomic():
        _write(study, items, rows, np.random.default_rng(seed))
    return len(rows)


def _write(study: Study, items, rows, rng) -> None:
    now = timezone.now()
    annotators = sorted({annotator for annotator, _, _ in rows})
    participants = Participant.objects.bulk_create(
        Participant(
            study=study,
            prolific_pid=SIMULATED_PID.format(n + 1),
            consented_at=now,
            screened_at=now,
            completed_at=now,
            decision_note=NOTE,
        )
        for n in annotators
    )
    tasks = Task.objects.bulk_create(
        Task(participant=participant, study=study, status=Task.Status.COMPLETED, expires_at=now, completed_at=now)
        for participant in participants
    )
    positions: dict[int, int] = {}
    task_items = []
    for annotator, clip, _ in rows:
        positions[annotator] = positions.get(annotator, -1) + 1
        item = items[clip]
        task_items.append(
            TaskItem(
                task=tasks[annotator],
                position=positions[annotator],
                clip=item.clip,
                study_item=item,
                word_count=item.word_total,
                duration=item.clip.duration,
                status=TaskItem.Status.SUBMITTED,
            )
        )
    task_items = TaskItem.objects.bulk_create(task_items)
    seconds = rng.lognormal(2.4, 0.4, size=len(rows))  # the simulation's time on a clip
    Annotation.objects.bulk_create(
        Annotation(
            item=task_item,
            participant=participants[annotator],
            clip=task_item.clip,
            levels=levels,
            coverage=1.0,
            seconds_spent=max(float(spent), task_item.duration + 1.0),
        )
        for (annotator, _, levels), task_item, spent in zip(rows, task_items, seconds, strict=True)
    )
    per_item: dict[int, int] = {}
    for _, clip, _ in rows:
        per_item[items[clip].pk] = per_item.get(items[clip].pk, 0) + 1
    for count in set(per_item.values()):
        study.items.filter(pk__in=[pk for pk, n in per_item.items() if n == count]).update(
            completed_count=F("completed_count") + count
        )
