"""What a download of computed scores answers while they are not ready (listening-form and suite
scores): 409 Conflict in plain text, saying why and where to follow the job, with Retry-After
while it runs, so that a script may poll the download URL."""

from django.http import HttpResponse

from annotation.models.background_job import BackgroundJob

RETRY_AFTER_SECONDS = 5


def scores_not_ready(job: BackgroundJob, *, page: str, what: str = "The scores") -> HttpResponse:
    """`page`: the absolute URL of the scores' page, where the job's progress shows."""
    if job.status == BackgroundJob.Status.FAILED:
        text = f"{what} could not be computed: {job.error}\nOpen {page} to try again.\n"
    else:
        text = (f"{what} are being computed ({job.phase or 'waiting for a worker'}). "
                f"Try again in a moment, or follow the progress on {page}\n")  # fmt: skip
    response = HttpResponse(text, status=409, content_type="text/plain; charset=utf-8")
    if not job.finished:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
