"""Recording playback and accepting submissions: every gate on the server.

A submission is accepted only for the participant's own open task, for the
next clip in order, with one level per word, at least `min_marked_words` and
at most `max_marked_fraction` of the words marked, and the clip verified as
listened to (annotation.listening). Submissions are final: the same answer
sent again returns the stored one and writes nothing; a different answer for
a submitted clip is refused.
"""

import math
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation import listening
from annotation.models import Annotation, Participant, PlaybackEvent, StudyItem, Task, TaskItem

MAX_EVENTS_PER_REPORT = 200
LEVELS = (0, 1, 2)


class SubmissionRefused(Exception):
    """Why a submission was not accepted; `reasons` are shown to the participant."""

    def __init__(self, reasons: list[str], *, final: bool = False):
        super().__init__("; ".join(reasons))
        self.reasons = reasons
        self.final = final  # the clip was already submitted with another answer


@dataclass(frozen=True)
class Submitted:
    annotation: Annotation
    duplicate: bool
    task_completed: bool


def max_marks(*, word_count: int, min_marked: int, max_fraction: float) -> int:
    # A short clip still allows the minimum: 30 % of 3 words would forbid marking any.
    return max(min_marked, math.floor(max_fraction * word_count + 1e-9))


def playback_record(*, item: TaskItem, events: list, received_at: datetime | None = None) -> int:
    """Store the page's playback events for a pending clip of an open task."""
    if item.status != TaskItem.Status.PENDING:
        return 0
    received_at = received_at or timezone.now()
    rows = [_event_row(item, raw, received_at) for raw in _event_list(events)]
    PlaybackEvent.objects.bulk_create(rows)
    return len(rows)


def _event_list(events) -> list:
    if not isinstance(events, list) or len(events) > MAX_EVENTS_PER_REPORT:
        raise ValueError(f"events must be a list of at most {MAX_EVENTS_PER_REPORT}")
    return events


def _event_row(item: TaskItem, raw, received_at: datetime) -> PlaybackEvent:
    if not isinstance(raw, dict) or raw.get("kind") not in PlaybackEvent.Kind.values:
        raise ValueError("each event needs a known kind")
    media_time, rate, client_ms = (_finite(raw.get(name)) for name in ("t", "rate", "at"))
    if not 0 <= media_time <= item.duration + 1 or not 0 < rate <= 16:
        raise ValueError("event time or rate out of range")
    return PlaybackEvent(
        item=item, kind=raw["kind"], media_time=media_time, rate=rate, client_ms=client_ms, received_at=received_at
    )


def _finite(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError("event fields must be numbers")
    return float(value)


def annotation_submit(
    *, participant_id: int, item_id: int, levels: list[int], mismatch: bool, now: datetime | None = None
) -> Submitted:
    now = now or timezone.now()
    try:
        with transaction.atomic():
            return _submit(participant_id, item_id, levels, mismatch, now)
    except IntegrityError:
        # A concurrent duplicate won the race for the one-to-one row.
        return _repeat(TaskItem.objects.select_related("annotation").get(pk=item_id), levels, mismatch)


def _submit(participant_id, item_id, levels, mismatch, now) -> Submitted:
    item = (
        TaskItem.objects.select_for_update(of=("self",))
        .select_related("task__study", "attention_check")
        .get(pk=item_id, task__participant_id=participant_id)
    )
    if item.status == TaskItem.Status.SUBMITTED:
        return _repeat(item, levels, mismatch)
    study = item.task.study
    _check_open_and_next(item, now)
    verdict = _check_gates(item, study, levels, now)
    annotation = Annotation.objects.create(
        item=item,
        participant_id=participant_id,
        clip_id=item.clip_id,
        levels=levels,
        mismatch_reported=mismatch,
        attention_passed=item.attention_check.passed_by(levels) if item.attention_check else None,
        coverage=round(verdict.coverage, 4),
        seconds_spent=round(verdict.wall_seconds, 3),
    )
    TaskItem.objects.filter(pk=item.pk).update(status=TaskItem.Status.SUBMITTED)
    if item.study_item_id:
        _count_submission(item.study_item_id, study, mismatch)
    completed = _complete_task_if_done(item.task, participant_id, now)
    return Submitted(annotation, duplicate=False, task_completed=completed)


def _repeat(item: TaskItem, levels, mismatch) -> Submitted:
    stored = item.annotation
    if stored.levels != levels or stored.mismatch_reported != bool(mismatch):
        raise SubmissionRefused(["This clip was already submitted, and answers are final."], final=True)
    done = not TaskItem.objects.filter(task_id=item.task_id, status=TaskItem.Status.PENDING).exists()
    return Submitted(stored, duplicate=True, task_completed=done)


def _check_open_and_next(item: TaskItem, now: datetime) -> None:
    task = item.task
    if task.status != Task.Status.OPEN or task.expires_at <= now:
        raise SubmissionRefused(["This task is closed: its time limit has passed."])
    first_pending = (
        TaskItem.objects.filter(task_id=task.pk, status=TaskItem.Status.PENDING)
        .order_by("position")
        .values_list("position", flat=True)
        .first()
    )
    if first_pending != item.position:
        raise SubmissionRefused(["Clips must be annotated in order; this is not the current clip."])


def _check_gates(item: TaskItem, study, levels, now) -> listening.Verdict:
    reasons = []
    if not isinstance(levels, list) or len(levels) != item.word_count or any(
        isinstance(level, bool) or level not in LEVELS for level in levels
    ):
        raise SubmissionRefused([f"Give one level (0, 1 or 2) for each of the {item.word_count} words."])
    marked = sum(1 for level in levels if level > 0)
    most = max_marks(word_count=item.word_count, min_marked=study.min_marked_words, max_fraction=study.max_marked_fraction)
    if marked < study.min_marked_words:
        reasons.append(f"Mark at least {study.min_marked_words} word(s) as emphasized.")
    if marked > most:
        reasons.append(f"Mark at most {most} of the {item.word_count} words.")
    verdict = listening.verify(
        _events(item), duration=item.duration, now_seconds=now.timestamp(), required_coverage=study.required_coverage
    )
    if not verdict.coverage_ok:
        reasons.append(f"Listen to the whole clip first (played so far: {round(100 * verdict.coverage)} %).")
    elif not verdict.wall_time_ok:
        reasons.append("Listen to the whole clip first.")
    if reasons:
        raise SubmissionRefused(reasons)
    return verdict


def _events(item: TaskItem) -> list[listening.Event]:
    return [
        listening.Event(kind, media_time, rate, client_ms / 1000, received_at.timestamp())
        for kind, media_time, rate, client_ms, received_at in PlaybackEvent.objects.filter(item=item).values_list(
            "kind", "media_time", "rate", "client_ms", "received_at"
        )
    ]


def _count_submission(study_item_id: int, study, mismatch: bool) -> None:
    changes = {"completed_count": F("completed_count") + 1, "reserved_count": F("reserved_count") - 1}
    if mismatch:
        changes["mismatch_count"] = F("mismatch_count") + 1
    StudyItem.objects.filter(pk=study_item_id).update(**changes)
    if mismatch:
        StudyItem.objects.filter(
            pk=study_item_id, review=StudyItem.Review.ACTIVE, mismatch_count__gte=study.mismatch_threshold
        ).update(review=StudyItem.Review.NEEDS_REVIEW)


def _complete_task_if_done(task: Task, participant_id: int, now: datetime) -> bool:
    if TaskItem.objects.filter(task_id=task.pk, status=TaskItem.Status.PENDING).exists():
        return False
    Task.objects.filter(pk=task.pk, status=Task.Status.OPEN).update(status=Task.Status.COMPLETED, completed_at=now)
    Participant.objects.filter(pk=participant_id, completed_at__isnull=True).update(completed_at=now)
    return True
