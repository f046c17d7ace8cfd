"""Recording playback and accepting submissions: every gate on the server.

A submission is accepted only for the participant's own open task, for the
next item in order, with an answer the item allows (annotation.services.gates)
and every clip of the item verified as listened to (annotation.listening).
Submissions are final: the same answer sent again returns the stored one and
writes nothing; a different answer for a submitted item is refused.
"""

import math
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Annotation, Participant, PlaybackEvent, StudyItem, Task, TaskItem
from annotation.services.gates import (  # noqa: F401  (max_marks is part of this module's API)
    SubmissionRefused,
    answer_problems,
    listening_problems,
    listening_verdicts,
    max_marks,
)

MAX_EVENTS_PER_REPORT = 200


@dataclass(frozen=True)
class Submitted:
    annotation: Annotation
    duplicate: bool
    task_completed: bool


def playback_record(*, item: TaskItem, events: list, received_at: datetime | None = None) -> int:
    """Store the page's playback events for a pending item of an open task."""
    if item.status != TaskItem.Status.PENDING:
        return 0
    received_at = received_at or timezone.now()
    tracks = len(item.presentation.get("durations") or [item.duration])
    rows = [_event_row(item, raw, received_at, tracks) for raw in _event_list(events)]
    PlaybackEvent.objects.bulk_create(rows)
    return len(rows)


def _event_list(events) -> list:
    if not isinstance(events, list) or len(events) > MAX_EVENTS_PER_REPORT:
        raise ValueError(f"events must be a list of at most {MAX_EVENTS_PER_REPORT}")
    return events


def _event_row(item: TaskItem, raw, received_at: datetime, tracks: int) -> PlaybackEvent:
    if not isinstance(raw, dict) or raw.get("kind") not in PlaybackEvent.Kind.values:
        raise ValueError("each event needs a known kind")
    media_time, rate, client_ms = (_finite(raw.get(name)) for name in ("t", "rate", "at"))
    track = raw.get("track", 0)
    if isinstance(track, bool) or track not in range(tracks):
        raise ValueError("event track out of range")
    if not 0 <= media_time <= item.duration + 1 or not 0 < rate <= 16:
        raise ValueError("event time or rate out of range")
    return PlaybackEvent(
        item=item, kind=raw["kind"], track=track, media_time=media_time, rate=rate, client_ms=client_ms,
        received_at=received_at,
    )  # fmt: skip


def _finite(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError("event fields must be numbers")
    return float(value)


def annotation_submit(
    *, participant_id: int, item_id: int, levels: list[int], mismatch: bool, response: dict | None = None,
    events: list | None = None, now: datetime | None = None,
) -> Submitted:  # fmt: skip
    """Accept an answer; `events` are the page's last playback reports, stored
    in the same transaction just before the listening check reads them."""
    now = now or timezone.now()
    response = response or {}
    try:
        with transaction.atomic():
            return _submit(participant_id, item_id, levels, response, mismatch, events or [], now)
    except IntegrityError:
        # A concurrent duplicate won the race for the one-to-one row.
        return _repeat(TaskItem.objects.select_related("annotation").get(pk=item_id), levels, response, mismatch)


def _submit(participant_id, item_id, levels, response, mismatch, events, now) -> Submitted:
    item = (
        TaskItem.objects.select_for_update(of=("self",))
        .select_related("task__study", "attention_check", "study_item__form_item")
        .get(pk=item_id, task__participant_id=participant_id)
    )
    if item.status == TaskItem.Status.SUBMITTED:
        return _repeat(item, levels, response, mismatch)
    if events:
        playback_record(item=item, events=events, received_at=now)
    study = item.task.study
    pending = _pending_positions(item.task_id)
    _check_open_and_next(item, pending, now)
    form_item = item.study_item.form_item if item.study_item_id else None
    problems = answer_problems(item, study, form_item, levels, response)
    verdicts = listening_verdicts(item, study, now)
    problems += listening_problems(verdicts)
    if problems:
        raise SubmissionRefused(problems)
    annotation = Annotation.objects.create(
        item=item,
        participant_id=participant_id,
        clip_id=item.clip_id,
        levels=levels,
        response=response,
        mismatch_reported=mismatch,
        attention_passed=_attention_result(item, form_item, levels, response),
        coverage=round(min(verdict.coverage for verdict in verdicts), 4),
        seconds_spent=round(verdicts[0].wall_seconds, 3),
    )
    TaskItem.objects.filter(pk=item.pk).update(status=TaskItem.Status.SUBMITTED)
    if item.study_item_id and not (form_item and form_item.is_attention_check):
        _count_submission(item.study_item_id, study, mismatch)
    completed = pending == [item.position] and _complete_task(item.task, participant_id, now)
    return Submitted(annotation, duplicate=False, task_completed=completed)


def _attention_result(item: TaskItem, form_item, levels, response) -> bool | None:
    if item.attention_check is not None:
        return item.attention_check.passed_by(levels)
    if form_item is not None and form_item.is_attention_check:
        return form_item.passed_by(levels, response)
    return None


def _repeat(item: TaskItem, levels, response, mismatch) -> Submitted:
    stored = item.annotation
    if stored.levels != levels or stored.response != response or stored.mismatch_reported != bool(mismatch):
        raise SubmissionRefused([_("This clip was already submitted, and answers are final.")], final=True)
    done = not TaskItem.objects.filter(task_id=item.task_id, status=TaskItem.Status.PENDING).exists()
    return Submitted(stored, duplicate=True, task_completed=done)


def _pending_positions(task_id: int) -> list[int]:
    return list(
        TaskItem.objects.filter(task_id=task_id, status=TaskItem.Status.PENDING)
        .order_by("position")
        .values_list("position", flat=True)
    )


def _check_open_and_next(item: TaskItem, pending: list[int], now: datetime) -> None:
    task = item.task
    if task.status != Task.Status.OPEN or task.expires_at <= now:
        raise SubmissionRefused([_("This task is closed: its time limit has passed.")])
    if not pending or pending[0] != item.position:
        raise SubmissionRefused([_("Clips must be annotated in order; this is not the current clip.")])


def _count_submission(study_item_id: int, study, mismatch: bool) -> None:
    changes = {"completed_count": F("completed_count") + 1, "reserved_count": F("reserved_count") - 1}
    if mismatch:
        changes["mismatch_count"] = F("mismatch_count") + 1
    StudyItem.objects.filter(pk=study_item_id).update(**changes)
    if mismatch:
        StudyItem.objects.filter(
            pk=study_item_id, review=StudyItem.Review.ACTIVE, mismatch_count__gte=study.mismatch_threshold
        ).update(review=StudyItem.Review.NEEDS_REVIEW)


def _complete_task(task: Task, participant_id: int, now: datetime) -> bool:
    """The last pending item was just submitted (the item row lock makes that certain)."""
    Task.objects.filter(pk=task.pk, status=Task.Status.OPEN).update(status=Task.Status.COMPLETED, completed_at=now)
    Participant.objects.filter(pk=participant_id, completed_at__isnull=True).update(completed_at=now)
    return True
