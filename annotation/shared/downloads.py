"""Downloads of what a background job made (reports, scores, exports, benchmark files), written
once: the job's result as an attachment when it has succeeded, and otherwise 409 Conflict in
plain text saying why and where to follow the job, with Retry-After while it runs, so that a
script may poll the download URL."""

from collections.abc import Callable

from django.http import HttpResponse, HttpResponseBase

from annotation.models.background_job import BackgroundJob

RETRY_AFTER_SECONDS = 5


def job_download(
    job: BackgroundJob, *, page: str, what: str, serve: Callable[[BackgroundJob], HttpResponseBase]
) -> HttpResponseBase:
    """`serve(job)` once the job has succeeded, else `download_not_ready`. `page`: the absolute URL
    where the job's progress shows; `what`: what the job makes ("The report"), for the message."""
    if job.status != BackgroundJob.Status.SUCCEEDED:
        return download_not_ready(job, page=page, what=what)
    return serve(job)


def download_not_ready(job: BackgroundJob, *, page: str, what: str) -> HttpResponse:
    if job.status == BackgroundJob.Status.FAILED:
        text = f"{what} failed: {job.error}\nOpen {page} to see why or try again.\n"
    else:
        text = (
            f"{what}: not ready yet ({job.phase or 'waiting for a worker'}). "
            f"Try again in a moment, or follow the progress on {page}\n"
        )
    response = HttpResponse(text, status=409, content_type="text/plain; charset=utf-8")
    if not job.finished:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def attachment(body: str | bytes, *, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
