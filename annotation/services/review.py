"""The researcher's decisions on participants and their export (sending them to Prolific:
prolific.services.decisions_send).

A decision can change until it has been sent to Prolific (decision_sent_at), then it is final.
A rejection needs one of Prolific's reason categories and a message to the participant of at
least 100 characters; it is kept in decision_note as "CATEGORY: message". Asking a participant
to return needs a reason, which Prolific shows them.
"""

from django.db import transaction

from annotation.models import Participant, Study

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


def participant_decide(*, participant: Participant, decision: str, note: str = "", category: str = "") -> None:
    """Record a decision; ValueError says what is missing or why it may not change."""
    note = _checked_note(decision, note.strip(), category)
    updated = Participant.objects.filter(pk=participant.pk, decision_sent_at__isnull=True).update(
        decision=decision, decision_note=note
    )
    if not updated:
        raise ValueError(f"The decision on {participant} was already sent to Prolific and can no longer change.")
    participant.decision, participant.decision_note = decision, note


def participants_decide(*, participants: list[Participant], decision: str, note: str = "", category: str = "") -> None:
    """The same decision for several participants: all of them, or none."""
    with transaction.atomic():
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
