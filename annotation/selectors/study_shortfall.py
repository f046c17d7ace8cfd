"""Why a study is not complete: the annotations its clips still lack, and where each one stands.

A clip's count (StudyItem.completed_count) holds the annotations that count toward its target:
a rejection takes the rejected participant's out (annotation.services.review), so a clip that
rejected work leaves short is handed out again. What each short clip lacks, target - count, is
split by where it stands now, in this order:

- in open tasks: reserved by a task still running (it may still deliver);
- waiting for mismatch review, or excluded in review: the clip is out of assignment;
- attention check: the clip is also one of the study's attention checks, so it is never handed
  out as a normal clip (refused since issue 33; a study made before may hold one);
- not yet handed out: waiting for a participant (top-ups open places for exactly these).

And, of what a short clip lacks, how much rejected work and returned tasks (expired, or returned
on Prolific, before they were submitted) account for: the causes, counted up to the clip's lack.
A form's attention-check items, and clips an adaptive design settled, lack nothing.
"""

from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Count

from annotation.models import Annotation, Participant, Study, StudyItem, TaskItem

Review = StudyItem.Review
IN_ASSIGNMENT = (Review.ACTIVE, Review.CLEARED)


@dataclass(frozen=True)
class StudyShortfall:
    target: int  # annotations a clip
    clips: int  # clips counted toward the target
    clips_short: int
    missing: int  # annotations the short clips lack
    where: dict[str, int] = field(default_factory=dict)  # the missing, by where they stand (keys: WHERE)
    causes: dict[str, int] = field(default_factory=dict)  # of the missing: rejected, returned
    check_clips: list[str] = field(default_factory=list)  # external ids of clips that are also checks
    unit: str = "clip"

    @property
    def complete(self) -> bool:
        return self.missing == 0


WHERE = {
    "reserved": "in open tasks",
    "needs_review": "on clips waiting for mismatch review",
    "excluded": "on clips excluded in review",
    "check": "on clips that are also attention checks (never handed out)",
    "unassigned": "not yet handed out (top-ups open places for these)",
}
CAUSES = {
    "rejected": "left by rejected work",
    "returned": "returned by tasks that expired or were returned",
}


def study_shortfall(*, study: Study) -> StudyShortfall:
    # By pk, as the top-ups exclude them: a negated JSON key lookup across the relation would also
    # drop the items whose settings lack the key.
    form_checks = StudyItem.objects.filter(study=study, form_item__settings__attention_check=True)
    items = StudyItem.objects.filter(study=study).exclude(pk__in=form_checks.values("pk"))
    if study.is_adaptive:
        items = items.exclude(settled=True)
    rows = list(items.values_list("pk", "clip_id", "clip__external_id", "completed_count", "reserved_count", "review"))
    check_clips = set(study.attention_checks.values_list("clip_id", flat=True))
    short = {pk: study.target_annotations - done for pk, _, _, done, _, _ in rows if done < study.target_annotations}
    rejected, returned = _rejected_per_item(study, short), _returned_per_item(study, short)
    where: Counter[str] = Counter()
    causes: Counter[str] = Counter()
    for pk, clip_id, _, _, reserved, review in rows:
        if pk not in short:
            continue
        lack = short[pk]
        if clip_id in check_clips and not study.capabilities.checks_are_items:
            where["check"] += lack
        elif review == Review.NEEDS_REVIEW:
            where["needs_review"] += lack
        elif review == Review.EXCLUDED:
            where["excluded"] += lack
        else:
            in_tasks = min(reserved, lack)
            where["reserved"] += in_tasks
            where["unassigned"] += lack - in_tasks
        causes["rejected"] += min(rejected.get(pk, 0), lack)
        causes["returned"] += min(returned.get(pk, 0), lack - min(rejected.get(pk, 0), lack))
    counted = study.items.count() - (_form_checks(study) if study.capabilities.checks_are_items else 0)
    return StudyShortfall(
        target=study.target_annotations,
        clips=counted,
        clips_short=len(short),
        missing=sum(short.values()),
        where={key: where[key] for key in WHERE if where[key]},
        causes={key: causes[key] for key in CAUSES if causes[key]},
        check_clips=sorted(ext for _, clip_id, ext, _, _, _ in rows if clip_id in check_clips)
        if not study.capabilities.checks_are_items
        else [],
        unit=study.capabilities.item_noun,
    )


def shortfall_text(shortfall: StudyShortfall) -> str:
    """One paragraph for the study's page: complete, or what is missing and why."""
    unit = shortfall.unit
    answers = "answer" if unit == "item" else "annotation"
    if not shortfall.clips:
        return f"No {unit}s in the study."
    if shortfall.complete:
        return f"Complete: every {unit} has its {shortfall.target} {answers}(s)."
    where = "; ".join(f"{count} {WHERE[key]}" for key, count in shortfall.where.items())
    text = (
        f"Not complete: {shortfall.missing} {answers}(s) missing on {shortfall.clips_short} of "
        f"{shortfall.clips} {unit}(s): {where}."
    )
    if shortfall.causes:
        causes = "; ".join(f"{count} {CAUSES[key]}" for key, count in shortfall.causes.items())
        text += f" Of the missing: {causes}."
    if shortfall.check_clips:
        text += (
            f" Attention-check clip(s) among the study's clips: {', '.join(shortfall.check_clips)}; "
            "they cannot reach the target."
        )
    return text


def _rejected_per_item(study: Study, items) -> dict[int, int]:
    rows = (
        Annotation.objects.filter(
            participant__study=study,
            participant__decision=Participant.Decision.REJECTED,
            item__study_item_id__in=list(items),
        )
        .values("item__study_item_id")
        .annotate(n=Count("pk"))
        .values_list("item__study_item_id", "n")
    )
    return dict(rows)


def _returned_per_item(study: Study, items) -> dict[int, int]:
    rows = (
        TaskItem.objects.filter(task__study=study, status=TaskItem.Status.RELEASED, study_item_id__in=list(items))
        .values("study_item_id")
        .annotate(n=Count("pk"))
        .values_list("study_item_id", "n")
    )
    return dict(rows)


def _form_checks(study: Study) -> int:
    return StudyItem.objects.filter(study=study, form_item__settings__attention_check=True).count()
