"""Top-ups: opening exactly the places that clips still below target need.

A clip is missing `target - completed - reserved` annotations, counted only
for clips still in assignment (review active or cleared): a clip waiting for
mismatch review or excluded is not topped up, nor one that is also an attention
check (it is never handed out). `completed` leaves out the annotations of
rejected participants (annotation.services.review), so a top-up opens the places
that rejected work leaves. Reserved annotations are not
missing: the open task that holds them may still deliver them, and if it
expires, the reservation goes back to the pool (and is missing again).

Places needed for missing annotations m_1..m_n with k clips per task:

    places = max(ceil((m_1 + ... + m_n) / k), max(m_1, ..., m_n))

Each new task takes at most k clips, hence the first term; a participant never
gets the same clip twice, so a clip missing 5 annotations needs 5 different
people, hence the second. Both bounds are reached: assignment hands out the
least-annotated clips first, which fills every clip within that many tasks.
This assumes the new places go to new participants (a repeat participant
cannot take clips they have already seen).

Places are counted as assignment counts them: every task but an expired one
holds a place. A drop-out's expired task therefore frees its place by itself;
only the places needed beyond those already free are opened, so running a
top-up twice opens nothing the second time.
"""

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Study, StudyItem, Task
from annotation.services.assignment import places_taken, tasks_expire

ASSIGNABLE = (StudyItem.Review.ACTIVE, StudyItem.Review.CLEARED)


def places_needed(missing: Iterable[int], clips_per_task: int) -> int:
    """Tasks needed to add `missing[i]` annotations to clip i (formula above)."""
    missing = [count for count in missing if count > 0]
    if not missing:
        return 0
    return max(math.ceil(sum(missing) / clips_per_task), *missing)


@dataclass(frozen=True)
class Shortfall:
    """Clips below target in one language (or in the whole study)."""

    language: str
    clips_below_target: int
    missing_annotations: int
    places_needed: int


@dataclass(frozen=True)
class TopupPlan:
    languages: list[Shortfall]
    total: Shortfall
    places: int | None  # the study's limit; None for no limit
    places_taken: int
    overdue_tasks: int  # open past their time limit; expiring them frees clips
    unit: str = "clip"  # what is counted: clips, or a form's items (a clip may have several)

    @property
    def places_free(self) -> int | None:
        return None if self.places is None else max(0, self.places - self.places_taken)

    @property
    def places_to_open(self) -> int | None:
        free = self.places_free  # None exactly when places is
        return None if free is None else max(0, self.total.places_needed - free)


@dataclass(frozen=True)
class TopupOpened:
    plan: TopupPlan  # as it stood when the places were opened
    expired_tasks: int
    places_before: int | None
    places_after: int | None

    @property
    def opened(self) -> int:
        return (self.places_after or 0) - (self.places_before or 0)


def topup_plan(*, study: Study, now: datetime | None = None) -> TopupPlan:
    """Clips below target by language, and the places that would fill them."""
    missing_by_language: dict[str, list[int]] = defaultdict(list)
    rows = (
        StudyItem.objects.filter(study=study, review__in=ASSIGNABLE)
        # A form's attention checks are answered by everyone and never counted.
        .exclude(pk__in=StudyItem.objects.filter(study=study, form_item__settings__attention_check=True).values("pk"))
        # A clip that is also an attention check is never handed out as a normal clip: places
        # opened for it would stay empty (annotation.selectors.study_shortfall names it instead).
        .exclude(clip_id__in=study.attention_checks.values("clip_id"))
        .annotate(load=F("completed_count") + F("reserved_count"))
        .filter(load__lt=study.target_annotations)
        .values_list("clip__language", "load")
    )
    if study.is_adaptive:  # a clip the design stopped early needs no more listeners
        rows = rows.filter(settled=False)
    for language, load in rows:
        missing_by_language[language].append(study.target_annotations - load)
    languages = [
        _shortfall(language, missing, study.clips_per_task) for language, missing in sorted(missing_by_language.items())
    ]
    everything = [count for missing in missing_by_language.values() for count in missing]
    open_tasks = Task.objects.filter(study=study, status=Task.Status.OPEN)
    return TopupPlan(
        languages=languages,
        total=_shortfall("all", everything, study.clips_per_task),
        places=study.places,
        places_taken=places_taken(study=study),
        overdue_tasks=open_tasks.filter(expires_at__lte=now or timezone.now()).count(),
        unit=study.capabilities.item_noun,
    )


def topup_open(*, study: Study, now: datetime | None = None) -> TopupOpened:
    """Expire overdue tasks, then raise `places` by the places still needed."""
    expired = tasks_expire(study=study, now=now)
    with transaction.atomic():
        # Locked so that two top-ups at once cannot both open the same places.
        study = Study.objects.select_for_update().get(pk=study.pk)
        plan = topup_plan(study=study, now=now)
        if study.places is None or not plan.places_to_open:
            return TopupOpened(plan, expired, study.places, study.places)
        after = study.places + plan.places_to_open
        Study.objects.filter(pk=study.pk).update(places=after)
    return TopupOpened(plan, expired, study.places, after)


def topup_summary(plan: TopupPlan, opened: TopupOpened | None = None) -> str:
    """One line for the command's last line and the admin's message."""
    total = plan.total
    answers = "answer" if plan.unit == "item" else "annotation"
    if not total.missing_annotations:
        head = f"No {plan.unit} in assignment is below target"
    else:
        head = (
            f"{total.missing_annotations} {answers}(s) missing on {total.clips_below_target} {plan.unit}(s); "
            f"{total.places_needed} place(s) needed"
        )
    if plan.places is None:
        return f"{head}. The study has no place limit: nothing to open."
    head += f", {plan.places_free} of {plan.places} free"
    if opened is not None and opened.opened:
        return f"{head}. Opened {opened.opened} place(s): places {opened.places_before} -> {opened.places_after}."
    if plan.places_to_open:
        return f"{head}. {plan.places_to_open} place(s) to open."
    return f"{head}. Nothing to open."


def _shortfall(language: str, missing: list[int], clips_per_task: int) -> Shortfall:
    return Shortfall(language, len(missing), sum(missing), places_needed(missing, clips_per_task))
