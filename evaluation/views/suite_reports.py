"""The suite pages (StressTest, StanceBench of a listening-form study; CAST of a CAST set) and
their CSV and JSON downloads. Staff only: the pages show gold answers and every system's outputs.

The scores are computed in the background and kept until their inputs change
(evaluation.services.suite_reports). Opening a page or a download asks for them: the page shows
the job's progress, polled over htmx; a download of scores that are not ready answers 409
Conflict, with Retry-After while they are computed, so that a script may poll it.
"""

import json

from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from annotation.access import get_study_for_staff
from annotation.jobs import job_refresh
from annotation.models import Study
from evaluation.access import get_cast_set_for_staff, get_suite_report_for_staff
from evaluation.models import SuiteReport
from evaluation.reports.suite_charts import suite_charts
from evaluation.reports.suite_format import suite_csv, suite_tables
from evaluation.services.suite_reports import suite_report_request
from evaluation.views.report_jobs import scores_not_ready

STUDY_PERM = "annotation.view_study"
CAST_PERM = "evaluation.view_castset"
Suite = SuiteReport.Suite


def _subject(request, suite: str, pk: int) -> dict:
    if suite not in Suite.values:
        raise Http404(f"no suite {suite!r}")
    if suite == Suite.CAST:
        return {"cast_set": get_cast_set_for_staff(request, pk, perm=CAST_PERM)}
    return {"study": get_study_for_staff(request, pk, perm=STUDY_PERM, kind=Study.Kind.LISTENING_FORM)}


@staff_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def suite_report(request, suite: str, pk: int):
    """GET: the scores, or the progress of their computation. POST: compute again after a failure."""
    subject = _subject(request, suite, pk)
    job = suite_report_request(suite=suite, **subject, user=request.user, retry_failed=request.method == "POST")
    if request.method == "POST":
        return redirect("evaluation:suite_report", suite=suite, pk=pk)
    name = subject.get("study") or subject.get("cast_set")
    context = {**admin.site.each_context(request), "title": f"{Suite(suite).label}: {name}", "subject": name,
               "suite": suite, "pk": pk, "job": job}  # fmt: skip
    if job.status == SuiteReport.Status.SUCCEEDED:
        report = json.loads(job.result_json)
        context |= {"report": report, "tables": suite_tables(report), "charts": suite_charts(report)}
    return TemplateResponse(request, "evaluation/suite_report.html", context)


@staff_member_required
@require_safe
def suite_report_progress(request, report_id: int):
    job = job_refresh(get_suite_report_for_staff(request, report_id, perm=(STUDY_PERM, CAST_PERM)))
    response = TemplateResponse(request, "evaluation/suite_report.html#progress", {"job": job})
    if job.finished and request.htmx:
        response.status_code = 286  # htmx stops polling; the page reloads to show the scores or the failure
        response["HX-Refresh"] = "true"
    return response


@staff_member_required
@require_safe
def suite_report_download(request, suite: str, pk: int, kind: str):
    subject = _subject(request, suite, pk)
    job = suite_report_request(suite=suite, **subject, user=request.user)
    if job.status != SuiteReport.Status.SUCCEEDED:
        return _not_ready(request, job)
    if kind == "json":
        response = HttpResponse(job.result_json, content_type="application/json")
    else:
        response = HttpResponse(suite_csv(json.loads(job.result_json)), content_type="text/csv; charset=utf-8")
    name = subject["study"].slug if "study" in subject else f"cast-set-{pk}"
    response["Content-Disposition"] = f'attachment; filename="{suite}-{name}-scores.{kind}"'
    return response


def _not_ready(request, job: SuiteReport) -> HttpResponse:
    pk = job.cast_set_id if job.suite == Suite.CAST else job.study_id
    page = request.build_absolute_uri(reverse("evaluation:suite_report", kwargs={"suite": job.suite, "pk": pk}))
    return scores_not_ready(job, page=page)
