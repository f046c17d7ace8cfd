"""The progress panel of a background job, written once for every page that follows one (imports,
reports, label sets, exports, Prolific sends, benchmark runs).

A page includes templates/admin/_job_progress.html; while the job runs, the panel polls its
progress URL over htmx, whose view answers with `job_progress_response`. When the job has ended
the answer is 286 (htmx stops polling) with HX-Refresh, so that the browser reloads the page and
every part of it (fields, results, buttons) shows the end state, not the panel alone.
"""

from django.template.response import TemplateResponse

from annotation.models.background_job import BackgroundJob
from annotation.shared.jobs import job_refresh

STOP_POLLING = 286


def job_progress_response(request, job: BackgroundJob, *, template: str, context: dict | None = None):
    """`template`: the page's partial that includes the panel (it gets `job`, `original` for the
    admin's change pages, and `context`). The job is refreshed first: re-queued if its worker went silent."""
    job = job_refresh(job)
    response = TemplateResponse(request, template, {"job": job, "original": job, **(context or {})})
    if job.finished and request.htmx:
        response.status_code = STOP_POLLING
        response["HX-Refresh"] = "true"
    return response
