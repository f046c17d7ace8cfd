"""The score page of a listening-form study, and its CSV and JSON downloads, served inside the
admin (evaluation.admin.agreement_reports wires the URLs). Staff only, with annotation.view_study: the page
shows gold answers and every participant's score.

The scores are computed in the background and kept until the answers change
(evaluation.services.listening_form_reports). Opening the page or a download asks for them: the
page then shows the job's progress, polled over htmx; a download of scores that are not ready
answers 409 Conflict, with Retry-After while they are computed, so that a script may poll it.
"""

import json

from django.http import HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from annotation.models import Study
from annotation.shared.access import get_study_for_staff
from annotation.shared.downloads import attachment, job_download
from annotation.views.job_progress import job_progress_response
from evaluation.access import get_listening_form_report_for_staff
from evaluation.models import ListeningFormReport
from evaluation.reports.listening_form_charts import accuracy_chart
from evaluation.reports.listening_form_format import report_csv, report_rows
from evaluation.services.listening_form_reports import listening_form_report_request
from evaluation.stats.listening_forms import DISAGREEMENT_DEFINITION, LACKING_ONE_ORDER_DEFINITION, TIE_POLICY

PERM = "annotation.view_study"
PAGE = "admin:evaluation_listeningformreport_study"
SECTIONS = {
    "single_choice": "Single choice",
    "stressed_words": "Stressed words",
    "rating": "Ratings",
    "pairwise": "Pairwise preference",
    "stance": "Stance",
    "agreement": "Agreement",
}


@require_http_methods(["GET", "HEAD", "POST"])
def listening_form_report(request, study_id: int, *, admin_site):
    """GET: the scores, or the progress of their computation. POST: compute again after a failure."""
    study = get_study_for_staff(request, study_id, perm=PERM, capability="answers_are_choices")
    job = listening_form_report_request(study=study, user=request.user, retry_failed=request.method == "POST")
    if request.method == "POST":
        return redirect(PAGE, study_id=study.pk)
    context = {
        **admin_site.each_context(request),
        "title": f"Listening-form scores: {study.name}",
        "study": study,
        "job": job,
        "opts": Study._meta,
    }
    if job.status == ListeningFormReport.Status.SUCCEEDED:
        context |= _result_context(json.loads(job.result_json))
    return TemplateResponse(request, "evaluation/listening_form_report.html", context)


@require_safe
def listening_form_report_progress(request, pk: int):
    job = get_listening_form_report_for_staff(request, pk, perm=PERM)
    return job_progress_response(request, job, template="evaluation/listening_form_report.html#progress")


@require_safe
def listening_form_report_download(request, study_id: int, kind: str):
    """The scores as CSV or JSON; 409 while they are computed (or after they failed)."""
    study = get_study_for_staff(request, study_id, perm=PERM, capability="answers_are_choices")
    job = listening_form_report_request(study=study, user=request.user)
    page = request.build_absolute_uri(reverse(PAGE, args=[study.pk]))
    return job_download(job, page=page, what="The form scores", serve=lambda done: _scores_file(done, study, kind))


def _scores_file(job: ListeningFormReport, study: Study, kind: str) -> HttpResponse:
    name = f"form-{study.slug}-scores.{kind}"
    if kind == "json":
        return attachment(job.result_json, filename=name, content_type="application/json")
    return attachment(report_csv(json.loads(job.result_json)), filename=name, content_type="text/csv; charset=utf-8")


def _result_context(report: dict) -> dict:
    rows = report_rows(report)
    sections = [
        {
            "name": name,
            "title": title,
            "summary": [r for r in rows if r[0] == name and not r[2]],
            "items": [r for r in rows if r[0] == name and r[2]],
        }
        for name, title in SECTIONS.items()
        if any(r[0] == name for r in rows)
    ]
    return {
        "report": report,
        "sections": sections,
        "tie_policy": TIE_POLICY,
        "disagreement_definition": DISAGREEMENT_DEFINITION,
        "lacking_one_order_definition": LACKING_ONE_ORDER_DEFINITION,
        "accuracy_chart": accuracy_chart(report["single_choice"]) if "single_choice" in report else "",
    }
