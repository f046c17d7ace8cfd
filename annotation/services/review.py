"""The researcher's decisions on participants and their export (sending them to Prolific:
prolific.services.decisions_send).

A decision can change until it has been sent to Prolific (decision_sent_at), then it is final.
A rejection needs one of Prolific's reason categories and a message to the participant of at
least 100 characters; it is kept in decision_note as "CATEGORY: message". Asking a participant
to return needs a reason, which Prolific shows them.
"""

from collections import defaultdict

import numpy as np
from django.db import transaction
from django.db.models import F

from annotation.models import Annotation, Participant, Study, StudyItem
from annotation.services.adaptive import item_state

Decision = Participant.Decision
# Prolific's rules for a rejection (docs.prolific.com, api-reference/submissions/transition-submission):
# a category from its list and a message to the participant.
MIN_REJECTION_MESSAGE = 100
REJECTION_CATEGORIES = {
    "TOO_QUICKLY": "Completed too quickly",
    "TOO_SLOWLY": "Completed too slowly",
    "FAILED_INSTRUCTIONS": "Failed to follow the instructions",
    "INCOMP_LONGITUDINAL": "Incomplete longitudinal study",
    "FAILED_CHECK": "Failed an attention check",
    "LOW_EFFORT": "Low effort",
    "MALINGERING": "Malingering",
    "NO_CODE": "No completion code",
    "BAD_CODE": "Wrong completion code",
    "NO_DATA": "No data",
    "UNSUPP_DEVICE": "Unsupported device",
    "OTHER": "Other",
}


@transaction.atomic
def participant_decide(*, participant: Participant, decision: str, note: str = "", category: str = "") -> None:
    """Record a decision; ValueError says what is missing or why it may not change. A rejection
    takes the participant's annotations out of their clips' counts (and lifting it puts them back),
    so that assignment hands those clips out again and top-ups ask for the places rejected work leaves."""
    note = _checked_note(decision, note.strip(), category)
    # The clips first, then the participant: the order a submission locks them in (its clip's
    # count, then, at the task's end, the participant), so that the two never wait on each other.
    items = _locked_items(participant)
    # No key update: a submission's insert of an annotation (its key share of the participant) goes on.
    before = Participant.objects.select_for_update(no_key=True).filter(pk=participant.pk)
    was_rejected = before.values_list("decision", flat=True).first() == Decision.REJECTED
    updated = Participant.objects.filter(pk=participant.pk, decision_sent_at__isnull=True).update(
        decision=decision, decision_note=note
    )
    if not updated:
        raise ValueError(f"The decision on {participant} was already sent to Prolific and can no longer change.")
    participant.decision, participant.decision_note = decision, note
    if was_rejected != (decision == Decision.REJECTED):
        _recount_work(participant, items, counted=was_rejected)  # lifted: counted again


def _locked_items(*participants: Participant) -> list[StudyItem]:
    """The clips these participants annotated whose counts hold their annotations, locked in pk
    order (as every multi-clip update locks them). A listening form's check items are left out:
    a submission never counts them (annotation.services.submission)."""
    annotated = Annotation.objects.filter(participant__in=participants, item__study_item__isnull=False)
    checks = StudyItem.objects.filter(form_item__settings__attention_check=True)
    clips = StudyItem.objects.filter(pk__in=annotated.values("item__study_item_id")).exclude(pk__in=checks.values("pk"))
    # No key update: a claim's insert of task items referring to the clip (a key share) goes on.
    return list(clips.select_for_update(no_key=True).order_by("pk"))


def _recount_work(participant: Participant, items: list[StudyItem], *, counted: bool) -> None:
    """Count the participant's annotations into their clips again (`counted`), or take them out:
    completed_count and, in an adaptive study, the per-word marks and the clip's settled state."""
    sign = 1 if counted else -1
    rows = Annotation.objects.filter(participant=participant, item__study_item_id__in=[item.pk for item in items])
    levels_by_item: dict[int, list[list[int]]] = defaultdict(list)
    for study_item_id, levels in rows.values_list("item__study_item_id", "levels"):
        levels_by_item[study_item_id].append(levels)
    study = participant.study
    for item in items:
        StudyItem.objects.filter(pk=item.pk).update(
            completed_count=F("completed_count") + sign * len(levels_by_item[item.pk])
        )
        if study.is_adaptive and item.word_marks:
            _recount_adaptive(study, item, levels_by_item[item.pk], sign)


def _recount_adaptive(study: Study, item: StudyItem, annotations: list[list[int]], sign: int) -> None:
    marks, heavy = (
        np.asarray(item.word_marks, dtype=int),
        np.asarray(item.word_heavy or [0] * len(item.word_marks), dtype=int),
    )
    for levels in annotations:
        if len(levels) == marks.size:
            marks += sign * (np.asarray(levels) >= 1)
            heavy += sign * (np.asarray(levels) == 2)
    seen = item.completed_count + sign * len(annotations)
    settled, priority = item_state(study, marks, heavy, seen)
    StudyItem.objects.filter(pk=item.pk).update(
        word_marks=marks.tolist(), word_heavy=heavy.tolist(), settled=settled, priority=priority
    )


def participants_decide(*, participants: list[Participant], decision: str, note: str = "", category: str = "") -> None:
    """The same decision for several participants: all of them, or none."""
    with transaction.atomic():
        # Every participant's clips at once, in one pk order, before any participant: locked one
        # participant after another they would be taken out of order (P1's clips 5 and 9, then
        # P2's clip 3) against an expiry or a refit that locks clips in pk order.
        _locked_items(*participants)
        for participant in participants:
            participant_decide(participant=participant, decision=decision, note=note, category=category)


def _checked_note(decision: str, note: str, category: str) -> str:
    if decision not in Decision.values:
        raise ValueError(f"Unknown decision {decision!r}; choose one of {', '.join(Decision.values)}.")
    if decision == Decision.REJECTED:
        if category not in REJECTION_CATEGORIES:
            choices = ", ".join(REJECTION_CATEGORIES)
            raise ValueError(f"A rejection needs one of Prolific's reason categories: {choices}.")
        if len(note) < MIN_REJECTION_MESSAGE:
            raise ValueError(
                f"Prolific requires a rejection message of at least {MIN_REJECTION_MESSAGE} characters "
                f"explaining the reason to the participant (this one has {len(note)})."
            )
        return f"{category}: {note}"
    if decision == Decision.RETURN_REQUESTED and not note:
        raise ValueError("Asking a participant to return needs a reason; Prolific shows it to them.")
    return "" if decision == Decision.PENDING else note


def rejection_parts(note: str) -> tuple[str, str]:
    """(category, message) of a rejection's decision_note."""
    category, _, message = note.partition(": ")
    if category not in REJECTION_CATEGORIES:
        raise ValueError(f"not a recorded rejection: {note[:40]!r}")
    return category, message


def approved_prolific_ids(*, study: Study) -> list[str]:
    """Prolific ids of the approved participants, for Prolific's "approve by upload"."""
    return list(
        Participant.objects.filter(study=study, decision=Decision.APPROVED)
        .exclude(prolific_pid="")
        .order_by("created_at", "pk")
        .values_list("prolific_pid", flat=True)
    )
