"""The agreement report pages, served inside the admin (evaluation.admin wires the URLs).

Viewing needs evaluation.view_agreementreport; starting a computation needs evaluation.add_agreementreport.
Reports name annotators by their opaque id; the page adds each one's Prolific id for users who
hold the participant permission (annotation.participant_names).
"""

import json
from dataclasses import replace
from urllib.parse import parse_qsl

from django.http import HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods, require_safe

from annotation.models import Study
from annotation.participant_names import sees_prolific_ids, study_display_names
from annotation.shared.access import get_study_for_staff, require_perm
from annotation.shared.downloads import attachment, job_download
from annotation.views.job_progress import job_progress_response
from evaluation.access import get_agreement_report_for_staff
from evaluation.forms import FIELDS, ReportForm, parameters_query
from evaluation.models import AgreementReport
from evaluation.reports.agreement_format import agreement_groups, report_csv, selection_statement
from evaluation.reports.svg import histogram_chart, interval_chart, scatter_chart
from evaluation.services.agreement_reports import (
    agreement_report_current,
    agreement_report_latest,
    agreement_report_request,
    parameters_from_dict,
)
from evaluation.views.agreement_drilldown import drilldown_context

SERIES = [
    "Fleiss' kappa (95 % CI, clips as clusters)",
    "Gwet's AC1 (95 % CI, clips as clusters)",
    "Krippendorff's alpha, ordinal (bootstrap 95 % CI)",
    "mean pairwise Cohen's kappa",
]
ALPHA_METRICS = ("nominal", "ordinal", "interval", "ratio")
KAPPA_WEIGHTINGS = ("unweighted", "linear", "quadratic")


@require_http_methods(["GET", "HEAD", "POST"])
def agreement_report_page(request, study_id: int, *, admin_site):
    study = get_study_for_staff(
        request, study_id, perm="evaluation.view_agreementreport", capability="answers_are_word_marks"
    )
    page = reverse("admin:evaluation_agreementreport_study", args=[study.pk])
    if request.method == "POST":
        require_perm(request, "evaluation.add_agreementreport")
        form = ReportForm(request.POST, study=study)
        if form.is_valid():
            agreement_report_request(study=study, parameters=form.parameters(), user=request.user)
            return redirect(f"{page}?{parameters_query(form.parameters())}")
    else:
        bound = any(key in request.GET for key in FIELDS)
        form = ReportForm(request.GET if bound else None, study=study)
    context = {
        **admin_site.each_context(request),
        "title": f"Agreement report: {study}",
        "study": study,
        "form": form,
        "page_url": page,
        "can_compute": request.user.has_perm("evaluation.add_agreementreport"),
    }
    if form.is_bound and not form.is_valid():  # bad parameters
        return TemplateResponse(request, "evaluation/agreement_report.html", context, status=400)
    parameters = form.parameters()
    report = agreement_report_current(study=study, parameters=parameters)
    query = parameters_query(parameters)
    context |= {"report": report, "parameters": parameters, "hidden_fields": parse_qsl(query, keep_blank_values=True)}
    if report is None:
        context["last"] = agreement_report_latest(study=study, parameters=parameters)
    elif report.status == AgreementReport.Status.SUCCEEDED:
        context |= _result_context(json.loads(report.result_json), page, parameters)
        context["sees_prolific_ids"] = sees_prolific_ids(request.user)
        context["annotator_rows"] = _annotator_rows(study, context["result"], named=context["sees_prolific_ids"])
        context |= drilldown_context(request, study, context["result"], report.pk)
    return TemplateResponse(request, "evaluation/agreement_report.html", context)


def _annotator_rows(study: Study, result: dict, *, named: bool) -> list[dict]:
    """The report's annotator rows; `named`: with each one's display name."""
    if not named:
        return result["annotators"]["rows"]
    names = study_display_names(study=study)
    return [{**row, "participant": names.get(row["annotator"], "")} for row in result["annotators"]["rows"]]


@require_safe
def agreement_report_progress(request, pk: int):
    report = get_agreement_report_for_staff(request, pk, perm="evaluation.view_agreementreport")
    return job_progress_response(
        request, report, template="evaluation/agreement_report.html#progress", context={"report": report}
    )


@require_safe
def agreement_report_download(request, pk: int, kind: str):
    """The report as JSON or CSV; 409 while it is computed (or after it failed)."""
    report = get_agreement_report_for_staff(request, pk, perm="evaluation.view_agreementreport")
    page = reverse("admin:evaluation_agreementreport_study", args=[report.study_id])
    query = parameters_query(parameters_from_dict(report.parameters))
    return job_download(
        report,
        page=request.build_absolute_uri(f"{page}?{query}"),
        what="The agreement report",
        serve=lambda done: _report_file(done, kind),
    )


def _report_file(report: AgreementReport, kind: str) -> HttpResponse:
    name = f"agreement-{report.study.slug}-{report.language or 'all'}-{report.pk}.{kind}"
    if kind == "json":
        return attachment(report.result_json, filename=name, content_type="application/json")
    return attachment(report_csv(json.loads(report.result_json)), filename=name, content_type="text/csv; charset=utf-8")


def _result_context(result: dict, page: str, parameters) -> dict:
    rows = list(agreement_groups(result))
    chart_rows = [
        (
            "all" if dimension == "pooled" else group or "(none)",
            [
                _point(r["fleiss"]["value"], r["fleiss"]["ci95"]),
                _point(_gwet(r, "ac1").get("value"), _gwet(r, "ac1").get("ci95")),
                _point(
                    r["krippendorff"]["ordinal"]["value"], (r["krippendorff"]["ordinal"]["bootstrap"] or {}).get("ci95")
                ),
                _point(r["cohen"]["value"], None),
            ],
        )
        for dimension, group, r in rows
        if dimension in ("pooled", "language")
    ]
    histogram = result["emphasis"]["scalar_histogram"]
    quality = result["annotators"]["rows"]
    points = [
        (row["marked_share"], row["kappa"], bool(row["flags"]), row["annotator"])
        for row in quality
        if row["kappa"] is not None and row["marked_share"] is not None
    ]
    languages = sorted(result["agreement"].get("language", {}))
    return {
        "result": result,
        "selection_lines": selection_statement(result),
        "agreement_rows": [_agreement_row(dimension, group, r) for dimension, group, r in rows],
        "emphasis_rows": _emphasis_rows(result["emphasis"]),
        "language_links": []
        if parameters.language
        else [(code, f"{page}?{parameters_query(_with_language(parameters, code))}") for code in languages if code],
        "agreement_chart": mark_safe(interval_chart(chart_rows, SERIES, title="Agreement by language")),
        "histogram_chart": mark_safe(
            histogram_chart(histogram["edges"], histogram.get("pooled", []), title="Scalar scores of the words")
        ),
        "quality_chart": mark_safe(
            scatter_chart(
                points,
                title="Annotators: agreement and marking",
                x_label="share of words marked",
                y_label="leave-one-out kappa",
            )
        ),
    }


def _with_language(parameters, code):
    return replace(parameters, language=code)


def _point(value, interval):
    if value is None:
        return None
    return (value, interval[0], interval[1]) if interval else (value, None, None)


def _agreement_row(dimension: str, group: str, r: dict) -> dict:
    alpha = r["krippendorff"]
    return {
        "dimension": dimension,
        "group": "all" if dimension == "pooled" else group or "(none)",
        "clips": r["clips"],
        "words": r["words"],
        "annotators": r["annotators"],
        "cohen": r["cohen"],
        "fleiss": r["fleiss"],
        "ac1": _gwet(r, "ac1"),
        "ac2": _gwet(r, "ac2_quadratic"),
        "cohen_levels": [r["cohen"].get("levels", {}).get(weighting, {}) for weighting in KAPPA_WEIGHTINGS],
        "alpha": [(metric, alpha.get(metric, {})) for metric in ALPHA_METRICS],
    }


def _gwet(r: dict, name: str) -> dict:
    """A Gwet coefficient of a group; {} in a report stored before they were computed (shown undefined)."""
    return r.get("gwet", {}).get(name, {})


def _emphasis_rows(emphasis: dict) -> list[dict]:
    rows = [{"dimension": "pooled", "group": "all", **emphasis["pooled"]}]
    for dimension in ("language", "variety", "emotion"):
        rows += [
            {"dimension": dimension, "group": group or "(none)", **rates}
            for group, rates in sorted(emphasis.get(dimension, {}).items())
        ]
    return rows
