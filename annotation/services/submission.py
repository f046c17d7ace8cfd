"""Recording playback and accepting submissions: every gate on the server.

A submission is accepted only for the participant's own open task, for the
next item in order, with an answer the item allows (annotation.services.gates)
and every clip of the item verified as listened to (annotation.playback).
Submissions are final: the same answer sent again returns the stored one and
writes nothing; a different answer for a submitted item is refused.
"""

import math
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import playback
from annotation.models import Annotation, AttentionCheck, ListeningFormItem, PlaybackEvent, Study, TaskItem
from annotation.services.adaptive import adaptive_prior_refit, adaptive_submit
from annotation.services.adaptive_model import ordinal_model_refit_request
from annotation.services.gates import (  # noqa: F401  (max_marks is part of this module's API)
    SubmissionRefused,
    answer_problems,
    max_marks,
    playback_problems,
    playback_verdicts,
)
from annotation.services.webhooks import study_target_announce
from annotation.sql import submission_rows as rows

MAX_EVENTS_PER_REPORT = 200
MAX_EVENTS_PER_ITEM = 2000  # a few minutes of playing: far more than a clip needs
MAX_PAGE_ID = 2**31 - 1


class NotTheCurrentClip(ValueError):
    """A playback report for an item other than the one being shown (409).
    Says nothing about the item, so nothing can be learned of clips not yet shown."""

    def __init__(self):
        super().__init__("playback reports are taken only for the clip being shown")


class TooManyReports(ValueError):
    def __init__(self):
        super().__init__(f"too many playback reports for this clip (at most {MAX_EVENTS_PER_ITEM} events)")


@dataclass(frozen=True)
class Submitted:
    annotation: Annotation
    duplicate: bool
    task_completed: bool


def item_for_participant(
    *, participant_id: int | None, item_id: int, slug: str | None = None, now: datetime | None = None
) -> rows.ItemState:
    """The participant's own task item as it stands, or TaskItem.DoesNotExist:
    another's item reveals nothing."""
    item = rows.item_state(item_id=item_id, participant_id=participant_id, slug=slug, now=now or timezone.now())
    if item is None:
        raise TaskItem.DoesNotExist(f"no task item {item_id} for this participant")
    return item


def playback_record(*, item, events, received_at: datetime | None = None) -> int:
    """Store playback events for the clip being shown (a TaskItem or an ItemState):
    the task's first pending item, while the task is open. Reports for an item
    already submitted are dropped; for any other item, NotTheCurrentClip (before
    the events are read, so that their checks reveal nothing of that clip).
    TooManyReports once the item holds MAX_EVENTS_PER_ITEM events."""
    now = received_at or timezone.now()
    if isinstance(item, TaskItem):
        item = item_for_participant(participant_id=item.task.participant_id, item_id=item.pk, now=now)
    if item.status != TaskItem.Status.PENDING:
        return 0
    if not item.task_open or item.next_position != item.position:
        raise NotTheCurrentClip()
    checked = [_event_row(item, raw) for raw in _event_list(events)]
    if not rows.playback_events_insert(item.pk, checked, now, limit=MAX_EVENTS_PER_ITEM):
        raise TooManyReports()
    return len(checked)


def playback_keep_refused(*, item: rows.ItemState, events, received_at: datetime) -> None:
    """Store the reports a refused submission carried, as if reported on their own: the
    listening they record is not lost with the answer (beyond MAX_EVENTS_PER_ITEM, dropped).
    Only for the clip on screen; ValueError for events that cannot be read."""
    if item.status != TaskItem.Status.PENDING or not item.task_open or item.next_position != item.position:
        return
    arrived = [_event_row(item, raw) for raw in _event_list(events)]
    rows.playback_events_insert(item.pk, arrived, received_at, limit=MAX_EVENTS_PER_ITEM)


def _event_list(events) -> list:
    if not isinstance(events, list) or len(events) > MAX_EVENTS_PER_REPORT:
        raise ValueError(f"events must be a list of at most {MAX_EVENTS_PER_REPORT}")
    return events


def _event_row(item, raw) -> tuple[str, int, float, float, float, int]:
    """(kind, track, media_time, rate, client_ms, page) of one reported event, checked."""
    if not isinstance(raw, dict) or raw.get("kind") not in PlaybackEvent.Kind.values:
        raise ValueError("each event needs a known kind")
    media_time, rate, client_ms = (_finite(raw.get(name)) for name in ("t", "rate", "at"))
    track = raw.get("track", 0)
    tracks = len(item.presentation.get("durations") or [item.duration])
    if isinstance(track, bool) or track not in range(tracks):
        raise ValueError("event track out of range")
    if not 0 <= media_time <= item.duration + 1 or not 0 < rate <= 16:
        raise ValueError("event time or rate out of range")
    page = raw.get("page", 0)
    if isinstance(page, bool) or not isinstance(page, int) or not 0 <= page <= MAX_PAGE_ID:
        raise ValueError("event page must be a whole number")
    return raw["kind"], track, media_time, rate, client_ms, page


def _finite(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError("event fields must be numbers")
    return float(value)


def annotation_submit(
    *,
    participant_id: int,
    item_id: int,
    levels: list[int],
    mismatch: bool,
    response: dict | None = None,
    events: list | None = None,
    now: datetime | None = None,
    item: rows.ItemState | None = None,
) -> Submitted:
    """Accept an answer. `events` are the page's playback reports not yet sent
    (a quick participant's page sends them all here, one request per clip):
    they count towards listening exactly as if they had been reported on
    their own just now, and are kept even when the answer is refused.
    `item`, when the caller already read it for this participant, saves a query."""
    now = now or timezone.now()
    response = response or {}
    item = item or item_for_participant(participant_id=participant_id, item_id=item_id, now=now)
    if item.status == TaskItem.Status.SUBMITTED:
        return _repeat(item, levels, response, mismatch)
    _check_open_and_next(item)
    arrived = [_event_row(item, raw) for raw in _event_list(events or [])]
    form_item = ListeningFormItem.objects.get(pk=item.form_item_id) if item.form_item_id else None
    verdicts = _judged(item, form_item, levels, response, arrived, now)
    annotation = Annotation(
        item_id=item.pk,
        participant_id=item.participant_id,
        clip_id=item.clip_id,
        levels=levels,
        response=response,
        mismatch_reported=bool(mismatch),
        attention_passed=_attention_result(item, form_item, levels, response),
        coverage=round(min(verdict.coverage for verdict in verdicts), 4),
        seconds_spent=round(verdicts[0].wall_seconds, 3),
        submitted_at=now,
    )
    last = item.pending_count == 1
    study_item_id = None if form_item and form_item.is_attention_check else item.study_item_id
    store = partial(
        rows.submission_store_with_state,
        annotation,
        task_id=item.task_id,
        events=arrived,
        threshold=item.study.mismatch_threshold,
        completes_task=last,
        study_item_id=study_item_id,
    )
    adaptive = item.study.adaptive_mode != Study.Adaptive.FIXED and study_item_id is not None
    if adaptive and study_item_id is not None:  # the clip's settled state is written with the submission
        study = Study.objects.get(pk=item.study.pk)
        annotation.pk = adaptive_submit(
            lambda state: store(state=state),
            study=study,
            study_item_id=study_item_id,
            levels=levels,
            counts=item.clip_counts,
        )
    else:
        annotation.pk = store()[0]
    if annotation.pk is None:
        return _lost_claim(item, levels, response, mismatch)
    if last:  # once a task, not once a clip: the check is a query over the study's clips
        if adaptive:
            adaptive_prior_refit(study_id=item.study.pk)
            ordinal_model_refit_request(study=study)
        study_target_announce(study_id=item.study.pk)
    return Submitted(annotation, duplicate=False, task_completed=last)


def _judged(item: rows.ItemState, form_item, levels, response, arrived: list[tuple], now: datetime):
    """The playback verdicts of an acceptable answer; otherwise SubmissionRefused,
    with the reports that came along stored all the same."""
    try:
        problems = answer_problems(item, item.study, form_item, levels, response)
        stored = rows.item_events(item.pk) if item.stored_events else []
        verdicts = playback_verdicts(item, item.study, now, stored + _as_heard(arrived, now), item.handed_out)
        problems += playback_problems(verdicts)
        if problems:
            raise SubmissionRefused(problems)
    except SubmissionRefused:
        rows.playback_events_insert(item.pk, arrived, now, limit=MAX_EVENTS_PER_ITEM)  # beyond the cap they are dropped
        raise
    return verdicts


def _as_heard(arrived: list[tuple], now: datetime) -> list[tuple[int, playback.Event]]:
    """Events that travelled with the submit, as the sound check reads them."""
    return [
        (track, playback.Event(kind, t, rate, ms / 1000, now.timestamp(), page))
        for kind, track, t, rate, ms, page in arrived
    ]


def _attention_result(item, form_item, levels, response) -> bool | None:
    if item.attention_check_id is not None:
        return AttentionCheck.objects.get(pk=item.attention_check_id).passed_by(levels)
    if form_item is not None and form_item.is_attention_check:
        return form_item.passed_by(levels, response)
    return None


def _lost_claim(item: rows.ItemState, levels, response, mismatch) -> Submitted:
    """The item stopped being pending since it was read: a concurrent
    duplicate submitted it (return that), or the task expired."""
    now = timezone.now()
    current = item_for_participant(participant_id=item.participant_id, item_id=item.pk, now=now)
    if current.status == TaskItem.Status.SUBMITTED:
        return _repeat(current, levels, response, mismatch)
    raise SubmissionRefused([_("This task is closed: its time limit has passed.")])


def _repeat(item, levels, response, mismatch) -> Submitted:
    stored = Annotation.objects.get(item_id=item.pk)
    if stored.levels != levels or stored.response != response or stored.mismatch_reported != bool(mismatch):
        raise SubmissionRefused([_("This clip was already submitted, and answers are final.")], final=True)
    return Submitted(stored, duplicate=True, task_completed=not rows.has_pending(item.task_id))


def submission_check_turn(item: rows.ItemState) -> None:
    """SubmissionRefused unless `item` may be answered now (the clip on screen of an open task) or
    was answered already (a resend, judged against the stored answer). The view asks before it reads
    the answer, so that the answer form's checks reveal nothing of an item not yet shown."""
    if item.status != TaskItem.Status.SUBMITTED:
        _check_open_and_next(item)


def _check_open_and_next(item: rows.ItemState) -> None:
    if not item.task_open:
        raise SubmissionRefused([_("This task is closed: its time limit has passed.")])
    if item.status != TaskItem.Status.PENDING or item.next_position != item.position:
        raise SubmissionRefused([_("Clips must be annotated in order; this is not the current clip.")])
