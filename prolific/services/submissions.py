"""Prolific's submission statuses, by polling and by webhook: a participant who returned, timed out
or was rejected at Prolific gives their open task's reserved clips back to the pool at once,
rather than at our own expiry (annotation.services.assignment.task_expire does the releasing).

Both ways end in `prolific_submission_record`, which keeps the newest status Prolific stated (a
webhook may come after a later poll, or out of order: an older statement changes nothing) and
releases the task once: task_expire's conditional update is the claim.
"""

import logging
import threading
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone

from annotation.models import Participant, Study, Task
from annotation.services.assignment import task_expire
from prolific.client import ProlificClient, ProlificError
from prolific.models.submissions import RELEASING_STATUSES, ProlificSubmission, ProlificSubmissionStatus

logger = logging.getLogger(__name__)


def prolific_submission_record(
    *, submission_id: str, status: str, at: datetime, source: str, prolific_study_id: str = "", prolific_pid: str = ""
) -> ProlificSubmission:
    """Store what Prolific said of one submission and act on it; an older statement than the one
    stored is kept out. `record.released_now`: whether this statement released a task."""
    if status not in ProlificSubmissionStatus.values:
        raise ValueError(f"unknown Prolific submission status {status!r}")
    with transaction.atomic():
        record = ProlificSubmission.objects.select_for_update().filter(submission_id=submission_id).first()
        if record is not None and record.status_at > at:
            record.released_now = False
            return record  # a newer status is known already
        participant = _participant(submission_id, prolific_study_id, prolific_pid)
        fields = {
            "status": status,
            "status_at": at,
            "source": source,
            "participant": participant or (record.participant if record else None),
            "prolific_study_id": prolific_study_id or (record.prolific_study_id if record else ""),
            "prolific_pid": prolific_pid or (record.prolific_pid if record else ""),
        }
        if record is None:
            record = ProlificSubmission.objects.create(submission_id=submission_id, **fields)
        else:
            for name, value in fields.items():
                setattr(record, name, value)
            record.save()
        released = _release(record.participant) if status in RELEASING_STATUSES and record.participant else None
        if released is not None:
            record.released_task = released
            record.save(update_fields=["released_task"])
    record.released_now = released is not None
    return record


def _participant(submission_id: str, prolific_study_id: str, prolific_pid: str) -> Participant | None:
    found = Participant.objects.filter(prolific_session_id=submission_id).order_by("pk").first()
    if found is None and prolific_study_id and prolific_pid:
        found = Participant.objects.filter(prolific_study_id=prolific_study_id, prolific_pid=prolific_pid).first()
    return found


def _release(participant: Participant) -> int | None:
    """Expire the participant's open task (its pending clips go back to the pool): its id, if any."""
    task_id = participant.tasks.filter(status=Task.Status.OPEN).values_list("pk", flat=True).first()
    if task_id is not None and task_expire(task_id=task_id):
        logger.info("task %s released: its Prolific submission ended", task_id)
        return task_id
    return None


def prolific_study_ids_to_poll() -> list[str]:
    """Prolific studies with a task still open here: only those can release anything."""
    ids = (
        Participant.objects.filter(tasks__status=Task.Status.OPEN)
        .exclude(prolific_study_id="")
        .values_list("prolific_study_id", flat=True)
        .distinct()
    )
    return sorted(set(ids))


def prolific_submissions_poll(*, client: ProlificClient, prolific_study_ids: list[str] | None = None) -> dict:
    """Read the submissions of each study from Prolific and record their statuses. What happened:
    studies read, submissions seen, tasks released, and the studies Prolific refused with why."""
    outcome: dict[str, Any] = {"studies": 0, "submissions": 0, "released": 0, "errors": {}}
    now = timezone.now()
    for study_id in prolific_study_ids if prolific_study_ids is not None else prolific_study_ids_to_poll():
        try:
            submissions = _for_study_of(client, study_id).submissions_list(study_id=study_id)
        except ProlificError as error:
            outcome["errors"][study_id] = str(error)
            continue
        outcome["studies"] += 1
        for submission in submissions:
            if submission.get("status") not in ProlificSubmissionStatus.values:
                continue  # a status this platform does not know: nothing to act on
            record = prolific_submission_record(
                submission_id=submission["id"],
                status=submission["status"],
                at=now,
                source="poll",
                prolific_study_id=study_id,
                prolific_pid=submission.get("participant_id", ""),
            )
            outcome["submissions"] += 1
            outcome["released"] += int(record.released_now)
    return outcome


def _for_study_of(client: ProlificClient, prolific_study_id: str) -> ProlificClient:
    """The client recording its calls under our study of these Prolific participants."""
    ours = Participant.objects.filter(prolific_study_id=prolific_study_id).values_list("study", flat=True).first()
    return client.for_study(Study.objects.get(pk=ours)) if ours else client


def prolific_submissions_poll_periodically(stopped: threading.Event) -> None:
    """Until `stopped`: poll every PROLIFIC_POLL_SECONDS (a Celery worker runs this in a thread, as
    it does the sweep for stale jobs; several workers polling at once record the same statuses)."""
    while not stopped.wait(settings.PROLIFIC_POLL_SECONDS):
        try:
            client = ProlificClient.from_settings()
            if client is not None:
                prolific_submissions_poll(client=client)
        except Exception:  # a database or network hiccup must not end the polling for good
            logger.exception(
                "polling Prolific's submissions failed; it runs again in %s s", settings.PROLIFIC_POLL_SECONDS
            )
        finally:
            connections.close_all()
