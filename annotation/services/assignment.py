"""Handing out tasks: the least-annotated clips first, safely under concurrency.

A task reserves its clips (reserved_count) until each is submitted (then
completed_count) or the task expires (the reservation is released). A clip is
offered only while completed + reserved is below the study's target (in the
adaptive modes that go past it, reallocation and model allocation, below the
maximum per clip, within the fixed design's budget), so no clip ever gets more
than that, however many people claim at once: on PostgreSQL the candidate rows
are locked with SELECT ... FOR UPDATE SKIP LOCKED, so concurrent claimers take
different clips instead of waiting; on SQLite the IMMEDIATE transaction
serializes claimers. Stance items get the pole order they have been given fewer
times (annotation.services.pole_orders), counted while their rows are locked.
"""

import random
import time
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count, F
from django.db.models.functions import Random
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.answer_forms import presentation_for
from annotation.models import (
    AttentionCheck,
    Clip,
    ListeningFormItem,
    Participant,
    Study,
    StudyItem,
    Task,
    TaskItem,
    Word,
)
from annotation.services.adaptive import allocation_budget_left, reallocation_budget_left
from annotation.services.pole_orders import pole_orders_for

# Waiting for concurrent claims to commit: from 10 ms, doubling, with jitter; about 2.5 s at most.
_RETRIES = 8
_RETRY_SECONDS = 0.01


class NoTaskAvailable(Exception):
    """Why a participant cannot be given a task now; the message is shown to them."""


def task_current(*, participant: Participant, now: datetime | None = None) -> Task | None:
    """The participant's open task, expiring it first if its time is up."""
    now = now or timezone.now()
    task = participant.tasks.filter(status=Task.Status.OPEN).first()
    if task is not None and task.expires_at <= now:
        task_expire(task_id=task.pk)
        return None
    if task is not None and task.study_id == participant.study_id:
        task.study = participant.study  # already read with the participant: the task page needs no query for it
    return task


def assignment_claim(*, participant: Participant, now: datetime | None = None) -> Task:
    now = now or timezone.now()
    study = participant.study
    tasks_expire(study=study, now=now)
    with transaction.atomic():
        # One claim at a time per participant (two tabs, a double click).
        participant = Participant.objects.select_for_update().get(pk=participant.pk)
        open_task = task_current(participant=participant, now=now)
        if open_task is not None:
            return open_task
        _check_may_claim(participant, study)
        items = _reserve_items(participant, study)
        if not items:
            raise NoTaskAvailable(_("There is no clip left for you to annotate in this study."))
        return _create_task(participant, study, items, now)


def _check_may_claim(participant: Participant, study: Study) -> None:
    if study.places is not None:
        # Count and take a place under the study's row lock: two claims at once
        # must not both take the last place.
        study = Study.objects.select_for_update().get(pk=study.pk)
    if not study.is_live:
        raise NoTaskAvailable(_("This study is not open at the moment."))
    if participant.tasks.exists() and not study.allow_repeat_tasks:
        raise NoTaskAvailable(_("You have already taken part in this study."))
    if study.places is not None and places_taken(study=study) >= study.places:
        raise NoTaskAvailable(_("All places in this study are taken."))


def places_taken(*, study: Study) -> int:
    """Tasks holding a place: every one but the expired (Prolific reopens those too)."""
    return Task.objects.filter(study=study).exclude(status=Task.Status.EXPIRED).count()


def _reserve_items(participant: Participant, study: Study) -> list[StudyItem]:
    """Lock and reserve up to clips_per_task clips. Rows that concurrent claimers
    hold are skipped rather than waited for. If that leaves the task short while
    such rows exist, give back what was locked (so those claimers can finish
    instead of everyone holding a part and waiting for the rest) and look again
    shortly; the last look keeps whatever it gets."""
    wanted = study.clips_per_task
    eligible = _eligible(participant, study)
    for attempt in range(_RETRIES):
        savepoint = transaction.savepoint()
        items = list(eligible.select_for_update(skip_locked=True, of=("self",)).order_by("load", Random())[:wanted])
        last_look = attempt == _RETRIES - 1
        if len(items) >= wanted or last_look or not eligible.exclude(pk__in=[i.pk for i in items]).exists():
            transaction.savepoint_commit(savepoint)
            break
        transaction.savepoint_rollback(savepoint)
        time.sleep(random.uniform(0.5, 1.5) * _RETRY_SECONDS * 2**attempt)
    if len(items) < wanted and study.adaptive_mode in (Study.Adaptive.REALLOCATE, Study.Adaptive.ALLOCATE):
        items += _reserve_beyond_target(participant, study, wanted - len(items))
    StudyItem.objects.filter(pk__in=[item.pk for item in items]).update(reserved_count=F("reserved_count") + 1)
    return items


def _reserve_beyond_target(participant: Participant, study: Study, wanted: int) -> list[StudyItem]:
    """Reallocation: up to `wanted` contested clips past the target (model allocation: past the
    minimum), most valuable first, within the budget left. The study's row lock makes the budget's
    check and spending one step."""
    Study.objects.select_for_update().filter(pk=study.pk).first()
    allocating = study.adaptive_mode == Study.Adaptive.ALLOCATE
    wanted = min(wanted, allocation_budget_left(study) if allocating else reallocation_budget_left(study))
    if wanted <= 0:
        return []
    extra = _eligible(participant, study, beyond_target=True)
    return list(
        extra.select_for_update(skip_locked=True, of=("self",)).order_by("-priority", "load", Random())[:wanted]
    )


def _eligible(participant: Participant, study: Study, *, beyond_target: bool = False):
    seen = TaskItem.objects.filter(task__participant=participant).values("clip_id")
    items = StudyItem.objects.filter(
        study=study, review__in=[StudyItem.Review.ACTIVE, StudyItem.Review.CLEARED]
    ).annotate(load=F("completed_count") + F("reserved_count"))
    # Model allocation gives every clip its minimum first, then chooses by priority past it.
    first = (
        study.adaptive_min_annotators if study.adaptive_mode == Study.Adaptive.ALLOCATE else study.target_annotations
    )
    if beyond_target:
        items = items.filter(load__gte=first, load__lt=study.adaptive_max_per_clip)
    else:
        items = items.filter(load__lt=first)
    if study.adaptive_mode != Study.Adaptive.FIXED:
        items = items.filter(settled=False)
    return (
        items.exclude(clip_id__in=seen)
        .exclude(clip_id__in=study.attention_checks.values("clip_id"))  # never the same clip twice in a task
        .exclude(pk__in=_form_checks(study).values("pk"))  # check items come only as checks
    )


def _form_checks(study: Study):
    return StudyItem.objects.filter(study=study, form_item__settings__attention_check=True)


def _create_task(participant: Participant, study: Study, items: list[StudyItem], now: datetime) -> Task:
    task = Task.objects.create(
        participant=participant, study=study, expires_at=now + timedelta(minutes=study.time_limit_minutes)
    )
    # Item order, option order and A/B order come from one recorded seed.
    seed = random.SystemRandom().randrange(2**31)
    rng = random.Random(seed)
    rng.shuffle(items)
    slots: list[tuple[int, StudyItem | None, AttentionCheck | None]] = [(item.clip_id, item, None) for item in items]
    for slot in _attention_slots(study, rng):
        slots.insert(rng.randint(0, len(slots)), slot)
    form_items = ListeningFormItem.objects.in_bulk(
        [item.form_item_id for _, item, _ in slots if item and item.form_item_id]
    )
    second_clips = [form_item.second_clip_id for form_item in form_items.values() if form_item.second_clip_id]
    clips = _clip_facts([clip_id for clip_id, _, _ in slots] + second_clips)
    stance = [
        item.pk
        for _, item, _ in slots
        if item and item.form_item_id and form_items[item.form_item_id].item_type == ListeningFormItem.Type.STANCE
    ]
    pole_orders = pole_orders_for(participant=participant, study_item_ids=stance, rng=rng)
    TaskItem.objects.bulk_create(
        _task_item(task, position, clip_id, item, check, form_items, clips, rng, seed, pole_orders)
        for position, (clip_id, item, check) in enumerate(slots)
    )
    return task


def _task_item(task, position, clip_id, item, check, form_items, clips, rng, seed, pole_orders) -> TaskItem:
    form_item = form_items.get(item.form_item_id) if item and item.form_item_id else None
    clip_ids = [clip_id] + ([form_item.second_clip_id] if form_item and form_item.second_clip_id else [])
    durations = [clips[pk][1] for pk in clip_ids]
    presentation = {"seed": seed, "durations": durations}
    if form_item is not None:
        presentation.update(presentation_for(form_item, rng, pole_order=pole_orders.get(item.pk)))
    return TaskItem(
        task=task,
        position=position,
        clip_id=clip_id,
        study_item=item,
        attention_check=check,
        word_count=clips[clip_id][0],
        duration=sum(durations),
        presentation=presentation,
    )


def _attention_slots(study: Study, rng: random.Random) -> list[tuple]:
    """(clip, study item, check) slots for the task's attention checks: word-level
    AttentionChecks in emphasis tasks, check items (with gold) in forms."""
    wanted = study.attention_checks_per_task
    if study.capabilities.checks_are_items:
        checks = list(_form_checks(study))
        return [(item.clip_id, item, None) for item in rng.sample(checks, min(wanted, len(checks)))]
    checks = list(study.attention_checks.all())
    return [(check.clip_id, None, check) for check in rng.sample(checks, min(wanted, len(checks)))]


def _clip_facts(clip_ids: list[int]) -> dict[int, tuple[int, float]]:
    counts = dict(
        Word.objects.filter(clip_id__in=clip_ids).values("clip_id").annotate(n=Count("id")).values_list("clip_id", "n")
    )
    durations = dict(Clip.objects.filter(pk__in=clip_ids).values_list("pk", "duration"))
    return {clip_id: (counts.get(clip_id, 0), durations[clip_id]) for clip_id in clip_ids}


def tasks_expire(*, study: Study | None = None, now: datetime | None = None) -> int:
    """Expire every overdue open task, returning their unsubmitted clips to the pool."""
    overdue = Task.objects.filter(status=Task.Status.OPEN, expires_at__lte=now or timezone.now())
    if study is not None:
        overdue = overdue.filter(study=study)
    return sum(task_expire(task_id=task_id) for task_id in overdue.values_list("pk", flat=True))


def task_expire(*, task_id: int) -> bool:
    with transaction.atomic():
        # The conditional update is the claim: a concurrent expiry finds nothing to do.
        if not Task.objects.filter(pk=task_id, status=Task.Status.OPEN).update(status=Task.Status.EXPIRED):
            return False
        # Locked before they are read: an item a submit is claiming this moment
        # is waited for, then found submitted and left out, so its reservation
        # is not counted down twice (the submit already did).
        pending = list(
            TaskItem.objects.select_for_update()
            .filter(task_id=task_id, status=TaskItem.Status.PENDING)
            .values_list("pk", "study_item_id")
        )
        TaskItem.objects.filter(pk__in=[pk for pk, _ in pending]).update(status=TaskItem.Status.RELEASED)
        study_item_ids = [pk for _, pk in pending if pk is not None]
        # Locked in pk order first, as a refit's refresh of priorities locks clips
        # (annotation.services.adaptive_model): a bare multi-row update could lock
        # them in another order and deadlock with it.
        list(StudyItem.objects.select_for_update().filter(pk__in=study_item_ids).order_by("pk").values_list("pk"))
        StudyItem.objects.filter(pk__in=study_item_ids).update(reserved_count=F("reserved_count") - 1)
    return True
