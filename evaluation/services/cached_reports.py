"""The one way a computed report is asked for: reuse the current one, or queue one.

A report kind is a BackgroundJob with a `fingerprint` of what it was computed from. A request
finds the newest report that is up to date, or one queued or still running, and queues a new one
only when there is none. A report that failed for the same inputs is handed back as it is, not
queued again, so that a page which requests on every visit does not start a failing computation
over and over; `retry_failed=True` (the page's "try again") queues a new one.
"""

from collections.abc import Callable

from django.db.models import QuerySet

from annotation.models.background_job import BackgroundJob
from annotation.shared.jobs import job_enqueue, job_refresh

Status = BackgroundJob.Status
_LOOK_BACK = 5  # the newest few reports; an older one is never the current one


def cached_report_request(
    *, reports: QuerySet, fingerprint: str, create: Callable[[], BackgroundJob], retry_failed: bool = False
) -> BackgroundJob:
    """`reports`: the subject's reports, newest first; `create()`: a new one (not yet queued)."""
    for report in reports.exclude(status=Status.FAILED)[:_LOOK_BACK]:
        report = job_refresh(report)
        if report.status == Status.SUCCEEDED and report.fingerprint == fingerprint:
            return report
        if not report.finished:
            return report
    latest = reports.first()
    failed_for_these_inputs = (
        latest is not None and latest.status == Status.FAILED and latest.fingerprint == fingerprint
    )
    if failed_for_these_inputs and not retry_failed:
        return latest
    report = create()
    job_enqueue(report)
    return report


def requesting_user(user):
    """The user to record as the report's creator (none for anonymous callers and workers)."""
    return user if user is not None and user.is_authenticated else None
