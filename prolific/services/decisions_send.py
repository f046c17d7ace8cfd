"""Sending the researcher's decisions to Prolific: approvals in bulk per Prolific study, the rest one by
one (annotation.services.review records the decisions; prolific.services.send runs this in a worker)."""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from annotation.models import Participant, Study
from annotation.participant_names import participant_display_name
from annotation.services.review import rejection_parts
from prolific.client import ProlificClient, ProlificError

Decision = Participant.Decision

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
