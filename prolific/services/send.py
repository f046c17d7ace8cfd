"""Sending the researcher's decisions to Prolific in the background: queue a send, run it.

A send calls Prolific once per participant (approvals in bulk), each call allowed 30 s, so it
runs in a worker rather than in the admin's request. One send at a time per study: a second
request while one is queued or running gets that one (a constraint guards against two at once).
"""

from django.db import IntegrityError, transaction

from annotation.models import Study
from annotation.shared.jobs import JobFailed, job_enqueue, job_refresh, job_run
from prolific.client import ProlificClient
from prolific.models import ProlificSendJob
from prolific.models.send import UNFINISHED
from prolific.services.decisions_send import participant_decisions_send


def prolific_decisions_send_create(*, study: Study, user=None) -> ProlificSendJob:
    """Queue sending the study's unsent decisions, or hand back the send already under way."""
    under_way = ProlificSendJob.objects.filter(study=study, status__in=UNFINISHED).first()
    if under_way is not None:
        return job_refresh(under_way)
    try:
        with transaction.atomic():
            job = ProlificSendJob.objects.create(study=study, created_by=user)
    except IntegrityError:  # another request queued one a moment ago
        queued = ProlificSendJob.objects.filter(study=study).first()
        if queued is None:  # and it is gone already: the conflict is news to nobody else
            raise
        return queued
    job_enqueue(job)
    return job


def prolific_decisions_send_latest(*, study: Study) -> ProlificSendJob | None:
    """The study's newest send, re-queued first if its worker went silent; None before the first."""
    job = ProlificSendJob.objects.filter(study=study).select_related("created_by").first()
    return job_refresh(job) if job is not None else None


def prolific_decisions_send_run(*, job_id: int) -> None:
    job_run(model=ProlificSendJob, job_id=job_id, work=_send)


def _send(job: ProlificSendJob, progress) -> dict:
    # Read when the worker runs: the token may have been removed since the send was queued.
    client = ProlificClient.from_settings()
    if client is None:
        raise JobFailed("PROLIFIC_API_TOKEN is not set: nothing was sent.")
    report = participant_decisions_send(study=job.study, client=client, progress=progress)
    return {
        "sent": report.sent,
        "failed": [list(pair) for pair in report.failed],
        "skipped": [list(pair) for pair in report.skipped],
    }
