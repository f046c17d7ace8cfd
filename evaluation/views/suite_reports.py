"""The suite pages (StressTest, StanceBench of a listening-form study; CAST of a CAST set) and
their CSV and JSON downloads, served inside the admin (evaluation.admin.suites wires the URLs). Staff only: the pages show gold answers and every system's outputs.

The scores are computed in the background and kept until their inputs change
(evaluation.services.suite_reports). Opening a page or a download asks for them: the page shows
the job's progress, polled over htmx; a download of scores that are not ready answers 409
Conflict, with Retry-After while they are computed, so that a script may poll it.
"""

import json

from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from annotation.shared.access import get_study_for_staff
from annotation.shared.downloads import attachment, job_download
from annotation.views.job_progress import job_progress_response
from evaluation.access import get_cast_set_for_staff, get_suite_report_for_staff
from evaluation.models import SuiteReport
from evaluation.reports.suite_charts import suite_charts
from evaluation.reports.suite_format import suite_csv, suite_tables
from evaluation.services.suite_reports import suite_report_request

STUDY_PERM = "annotation.view_study"
CAST_PERM = "evaluation.view_castset"
PAGE = "admin:evaluation_suitereport_page"
Suite = SuiteReport.Suite


def _subject(request, suite: str, pk: int) -> dict:
    if suite not in Suite.values:
        raise Http404(f"no suite {suite!r}")
    if suite == Suite.CAST:
        return {"cast_set": get_cast_set_for_staff(request, pk, perm=CAST_PERM)}
    return {"study": get_study_for_staff(request, pk, perm=STUDY_PERM, capability="answers_are_choices")}


@require_http_methods(["GET", "HEAD", "POST"])
def suite_report(request, suite: str, pk: int, *, admin_site):
    """GET: the scores, or the progress of their computation. POST: compute again after a failure."""
    subject = _subject(request, suite, pk)
    job = suite_report_request(suite=suite, **subject, user=request.user, retry_failed=request.method == "POST")
    if request.method == "POST":
        return redirect(PAGE, suite=suite, pk=pk)
    name = subject.get("study") or subject.get("cast_set")
    context = {
        **admin_site.each_context(request),
        "title": f"{Suite(suite).label}: {name}",
        "subject": name,
        "suite": suite,
        "pk": pk,
        "job": job,
    }
    if job.status == SuiteReport.Status.SUCCEEDED:
        report = json.loads(job.result_json)
        context |= {"report": report, "tables": suite_tables(report), "charts": suite_charts(report)}
    return TemplateResponse(request, "evaluation/suite_report.html", context)


@require_safe
def suite_report_progress(request, report_id: int):
    job = get_suite_report_for_staff(request, report_id, perm=(STUDY_PERM, CAST_PERM))
    return job_progress_response(request, job, template="evaluation/suite_report.html#progress")


@require_safe
def suite_report_download(request, suite: str, pk: int, kind: str):
    """The scores as CSV or JSON; 409 while they are computed (or after they failed)."""
    subject = _subject(request, suite, pk)
    job = suite_report_request(suite=suite, **subject, user=request.user)
    name = subject["study"].slug if "study" in subject else f"cast-set-{pk}"
    page = request.build_absolute_uri(reverse(PAGE, kwargs={"suite": suite, "pk": pk}))
    filename = f"{suite}-{name}-scores.{kind}"
    return job_download(job, page=page, what="The scores", serve=lambda done: _scores_file(done, filename, kind))


def _scores_file(job: SuiteReport, filename: str, kind: str) -> HttpResponse:
    if kind == "json":
        return attachment(job.result_json, filename=filename, content_type="application/json")
    return attachment(suite_csv(json.loads(job.result_json)), filename=filename, content_type="text/csv; charset=utf-8")
