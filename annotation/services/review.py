"""The researcher's decisions on participants, their export, and sending them to Prolific.

A decision can change until it has been sent to Prolific (decision_sent_at), then it is final.
A rejection needs one of Prolific's reason categories and a message to the participant of at
least 100 characters; it is kept in decision_note as "CATEGORY: message". Asking a participant
to return needs a reason, which Prolific shows them.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from annotation.models import Participant, Study
from annotation.participant_names import participant_display_name
from annotation.prolific import MIN_REJECTION_MESSAGE, REJECTION_CATEGORIES, ProlificClient, ProlificError

Decision = Participant.Decision


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


SEND_PHASE = "sending decisions to Prolific"


@dataclass
class SendReport:
    sent: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (participant, error)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (participant, why)

    @property
    def handled(self) -> int:
        """Participants dealt with so far: each ends in exactly one of the three lists."""
        return len(self.sent) + len(self.failed) + len(self.skipped)


def participant_decisions_send(
    *, study: Study, client: ProlificClient, now: datetime | None = None, progress=None
) -> SendReport:
    """Send every decision not yet sent: approvals in bulk per Prolific study, the rest one by one.

    decision_sent_at is written only after Prolific accepted, and only if the decision did not
    change meanwhile; a failure leaves the participant pending to send, with the error reported.
    `progress(phase, done, total)`, when given, hears of each call to Prolific (participants done).
    """
    now = now or timezone.now()
    report = SendReport()
    unsent = list(
        Participant.objects.filter(study=study, decision_sent_at__isnull=True)
        .exclude(decision=Decision.PENDING)
        .order_by("created_at", "pk")
    )
    progress = progress or (lambda phase, done, total: None)
    progress(SEND_PHASE, 0, len(unsent))
    approvals: dict[str, list[Participant]] = defaultdict(list)
    for participant in unsent:
        if not participant.prolific_pid:
            report.skipped.append((_named(participant), "not a Prolific participant"))
        elif participant.decision == Decision.APPROVED and participant.prolific_study_id:
            approvals[participant.prolific_study_id].append(participant)
        elif not participant.prolific_session_id:
            report.skipped.append((_named(participant), "no Prolific submission id (SESSION_ID) was recorded"))
        else:
            _send_one(client, participant, report, now)
            progress(SEND_PHASE, report.handled, len(unsent))
    for prolific_study_id, group in approvals.items():
        _send_approvals(client, prolific_study_id, group, report, now)
        progress(SEND_PHASE, report.handled, len(unsent))
    return report


def _send_one(client: ProlificClient, participant: Participant, report: SendReport, now: datetime) -> None:
    submission = participant.prolific_session_id
    try:
        if participant.decision == Decision.APPROVED:
            client.approve(submission)
        elif participant.decision == Decision.REJECTED:
            category, message = rejection_parts(participant.decision_note)
            client.reject(submission, message=message, category=category)
        else:
            client.request_return(submission, reasons=[participant.decision_note])
    except (ProlificError, ValueError) as error:
        report.failed.append((_named(participant), str(error)))
        return
    _mark_sent([participant], report, now)


def _send_approvals(client, prolific_study_id: str, group: list[Participant], report: SendReport, now) -> None:
    try:
        client.bulk_approve(study_id=prolific_study_id, participant_ids=[p.prolific_pid for p in group])
    except ProlificError as error:
        report.failed.extend((_named(participant), str(error)) for participant in group)
        return
    _mark_sent(group, report, now)


def _mark_sent(participants: list[Participant], report: SendReport, now: datetime) -> None:
    for participant in participants:
        updated = Participant.objects.filter(
            pk=participant.pk,
            decision=participant.decision,
            decision_note=participant.decision_note,
            decision_sent_at__isnull=True,
        ).update(decision_sent_at=now)
        if updated:
            report.sent.append(_named(participant))
        else:
            report.failed.append(
                (_named(participant), f"the decision changed while it was sent; Prolific got {participant.decision!r}")
            )


def _named(participant: Participant) -> str:
    """How a send's outcome names the participant: the display name, as on the review page (whose
    users hold the participant permission)."""
    return participant_display_name(participant_pk=participant.pk, prolific_pid=participant.prolific_pid)
