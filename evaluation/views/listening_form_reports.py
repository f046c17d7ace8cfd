"""The score page of a listening-form study, and its CSV and JSON downloads. Staff only, with
annotation.view_study: the page shows gold answers and every participant's score."""

import csv
import io
import json

from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.views.decorators.http import require_safe

from annotation.models import Study
from evaluation.reports.listening_form_charts import accuracy_chart
from evaluation.selectors.listening_form_reports import form_study_report
from evaluation.stats.listening_forms import DISAGREEMENT_DEFINITION, TIE_POLICY

COLUMNS = ["section", "group", "item", "measure", "value", "ci95_low", "ci95_high", "n"]
SECTIONS = {
    "single_choice": "Single choice", "stressed_words": "Stressed words", "rating": "Ratings",
    "pairwise": "Pairwise preference", "stance": "Stance", "agreement": "Agreement",
}  # fmt: skip


def _form_study_for_staff(request, study_id: int) -> Study | HttpResponse:
    if not request.user.has_perm("annotation.view_study"):
        return HttpResponseForbidden("You may not view studies.")
    return get_object_or_404(Study, pk=study_id, kind=Study.Kind.FORM)


@staff_member_required
@require_safe
def form_report(request, study_id: int):
    study = _form_study_for_staff(request, study_id)
    if isinstance(study, HttpResponse):
        return study
    report = form_study_report(study=study)
    rows = report_rows(report)
    sections = [
        {"name": name, "title": title, "summary": [r for r in rows if r[0] == name and not r[2]],
         "items": [r for r in rows if r[0] == name and r[2]]}
        for name, title in SECTIONS.items() if any(r[0] == name for r in rows)
    ]  # fmt: skip
    context = {
        **admin.site.each_context(request),
        "title": f"Form scores: {study.name}", "study": study, "report": report, "sections": sections,
        "opts": Study._meta, "tie_policy": TIE_POLICY, "disagreement_definition": DISAGREEMENT_DEFINITION,
        "accuracy_chart": accuracy_chart(report["single_choice"]) if "single_choice" in report else "",
    }  # fmt: skip
    return TemplateResponse(request, "evaluation/listening_form_report.html", context)


@staff_member_required
@require_safe
def form_report_download(request, study_id: int, kind: str):
    study = _form_study_for_staff(request, study_id)
    if isinstance(study, HttpResponse):
        return study
    report = form_study_report(study=study)
    if kind == "json":
        response = HttpResponse(json.dumps(report, indent=1), content_type="application/json")
    else:
        buffer = io.StringIO()
        csv.writer(buffer).writerows([COLUMNS, *report_rows(report)])
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="form-{study.slug}-scores.{kind}"'
    return response


def report_rows(report: dict) -> list[list]:
    """The report in long form, one measure a row (COLUMNS); an empty item means a summary row."""
    rows = []

    def add(section, group, item, measure, value, ci=None, n=""):
        low, high = ci or ("", "")
        rows.append([section, group, item, measure, "" if value is None else value, low, high, n])

    def proportion(section, group, item, measure, scores):
        add(section, group, item, measure, scores["value"], scores["ci95"], scores["trials"])

    if choice := report.get("single_choice"):
        groups = [("all", choice)] + [(f"{k}={v}", s) for k, values in choice["by"].items() for v, s in values.items()]
        for group, scores in groups:
            proportion("single_choice", group, "", "accuracy", scores["accuracy"])
            proportion("single_choice", group, "", "majority_vote_accuracy", scores["majority_vote_accuracy"])
            add("single_choice", group, "", "tied_items", scores["tied_items"], n=scores["items"])
        for row in choice["per_item"]:
            add("single_choice", "", row["item"], "correct_answers", row["correct"], n=row["answers"])
            add("single_choice", "", row["item"], "majority_correct", int(row["majority_correct"]), n=row["answers"])
    if marked := report.get("stressed_words"):
        for group, scores in (("pooled", marked["pooled"]), ("item mean", marked["item_mean"]),
                              ("participant mean", marked["participant_mean"])):  # fmt: skip
            for measure in ("precision", "recall", "f1"):
                n = scores.get(f"{measure}_n", marked["answers"])  # averages: how many were defined
                add("stressed_words", group, "", measure, scores[measure], n=n)
        for row in marked["per_item"]:
            for measure in ("precision", "recall", "f1"):
                add("stressed_words", "", row["item"], measure, row[measure], n=row["answers"])
    if rating := report.get("rating"):
        for system, scores in rating["per_system"].items():
            add("rating", f"system={system}", "", "mos", scores["mean"], scores["ci95"], scores["n"])
        for row in rating["per_item"]:
            add("rating", f"system={row['system']}", row["item"], "mos", row["mean"], row["ci95"], row["n"])
    if pairwise := report.get("pairwise"):
        groups = [("all", "", pairwise["overall"])] + [("", row["item"], row) for row in pairwise["per_item"]]
        groups += [(f"{k}={v}", "", s) for k, values in pairwise["by"].items() for v, s in values.items()]
        for group, item, scores in groups:
            proportion("pairwise", group, item, "prefer_a", scores["prefer_a"])
            add("pairwise", group, item, "p_value_binomial", scores["p_value"], n=scores["a"] + scores["b"])
            add("pairwise", group, item, "no_preference", scores["no_preference"])
    if stance := report.get("stance"):
        for dimension, scores in stance["per_dimension"].items():
            score = scores["score"]
            add("stance", dimension, "", "signed_score", score["mean"], score["ci95"], scores["items"])
            disagreement = scores["disagreement"]
            add("stance", dimension, "", "pole_order_disagreement", disagreement["rate"],
                n=disagreement["items_with_both_orders"])  # fmt: skip
        for row in stance["per_item"]:
            add("stance", row["dimension"], row["item"], "consensus", row["consensus"], n=row["answers"])
    for item_type, kappa in report["agreement"].items():
        add("agreement", item_type, "", "fleiss_kappa", kappa["kappa"], kappa["ci95"], kappa["units"])
    return rows
