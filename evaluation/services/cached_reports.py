"""The one way a computed report is asked for: reuse the current one, or queue one.

A report kind is a BackgroundJob with a `fingerprint` of what it was computed from. A request
finds the newest report that is up to date, or one queued or still running, and queues a new one
only when there is none. A report that failed for the same inputs is handed back as it is, not
queued again, so that a page which requests on every visit does not start a failing computation
over and over; `retry_failed=True` (the page's "try again") queues a new one.
"""

from collections.abc import Callable
from typing import Any, TypeVar

from django.db.models import QuerySet

from annotation.models.background_job import BackgroundJob
from annotation.shared.jobs import job_enqueue, job_refresh

Status = BackgroundJob.Status
Report = TypeVar("Report", bound=BackgroundJob)
_LOOK_BACK = 5  # the newest few reports; an older one is never the current one


def cached_report_request(
    *, reports: QuerySet[Any], fingerprint: str, create: Callable[[], Report], retry_failed: bool = False
) -> Report:
    """`reports`: the subject's reports, newest first (of the kind `create` makes, which has the
    `fingerprint` field that BackgroundJob has not; hence Any); `create()`: a new one (not yet queued)."""
    for report in reports.exclude(status=Status.FAILED)[:_LOOK_BACK]:
        report = job_refresh(report)
        if report.status == Status.SUCCEEDED and report.fingerprint == fingerprint:
            return report
        if not report.finished:
            return report
    latest = reports.first()
    if latest is not None and latest.status == Status.FAILED and latest.fingerprint == fingerprint and not retry_failed:
        return latest  # failed for these inputs
    report = create()
    job_enqueue(report)
    return report


def requesting_user(user):
    """The user to record as the report's creator (none for anonymous callers and workers)."""
    return user if user is not None and user.is_authenticated else None
