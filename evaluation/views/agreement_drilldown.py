"""The drill-down on the agreement report page, and a clip's page: hear it, see each annotator's
marks word by word. Inside the admin (evaluation.admin wires the URL); viewing needs
evaluation.view_agreementreport, Prolific ids annotation.change_participant.
"""

import json
from urllib.parse import urlencode

from django.http import Http404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_safe

from annotation.audio_links import signed_audio_url
from annotation.models import Study
from annotation.participant_names import sees_prolific_ids, study_display_names
from annotation.shared.access import get_study_for_staff
from evaluation.models import AgreementReport
from evaluation.reports.drilldown import SORTABLE, clip_rows
from evaluation.selectors.clip_marks import clip_marks

CLIPS_PER_PAGE = 50
HEADERS = (  # the clip table's columns, each a link that sorts by it
    ("clip", "clip"),
    ("annotators", "annotators"),
    ("words", "words"),
    ("agreement", "agreement"),
    ("alpha_ordinal", "alpha (ordinal)"),
    ("contested_share", "contested words"),
    ("marked_share", "share marked"),
    ("mismatch_reports", "mismatch reports"),
)
LEVEL_NAMES = {0: "", 1: "emphasized", 2: "strongly emphasized"}


def drilldown_context(request, study: Study, result: dict, report_pk: int) -> dict:
    """What templates/evaluation/_drilldown.html shows: clips sorted by the `sort` query parameter
    (a column, "-" first for descending), a page of them at a time, and the other sections."""
    section = result.get("drilldown")
    if section is None:  # a report stored before reports had one
        return {"drilldown": None}
    order_by = request.GET.get("sort", "agreement")
    if order_by.lstrip("-") not in SORTABLE:
        order_by = "agreement"
    rows = clip_rows(section, order_by=order_by)
    page = _page_number(request, len(rows))
    clip_url = reverse("admin:evaluation_agreementreport_clip", args=[study.pk, "CLIP"])
    shown = [
        {**row, "url": clip_url.replace("CLIP", row["clip"]) + f"?report={report_pk}"}
        for row in rows[page * CLIPS_PER_PAGE : (page + 1) * CLIPS_PER_PAGE]
    ]
    names = study_display_names(study=study) if sees_prolific_ids(request.user) else {}
    return {
        "drilldown": section,
        "drilldown_clips": shown,
        "drilldown_sort": order_by,
        "drilldown_headers": [
            {
                "column": column,
                "label": label,
                "url": _sort_query(request, column, order_by),
                "arrow": _arrow(column, order_by),
            }
            for column, label in HEADERS
        ],
        "drilldown_pages": _pages(request, page, len(rows)),
        "drilldown_pairs": [
            {**row, "a_name": names.get(row["a"]), "b_name": names.get(row["b"])} for row in section["pairs"]
        ],
    }


def _page_number(request, rows: int) -> int:
    last = max(0, (rows - 1) // CLIPS_PER_PAGE)
    try:
        return min(max(0, int(request.GET.get("clips_page", "1")) - 1), last)
    except ValueError:
        return 0


def _sort_query(request, column: str, current: str) -> str:
    """The link of a column's header: ascending first, descending when it is already ascending."""
    wanted = f"-{column}" if current == column else column
    return "?" + urlencode({**request.GET.dict(), "sort": wanted, "clips_page": 1}) + "#drilldown"


def _arrow(column: str, current: str) -> str:
    return "\u25b2" if current == column else "\u25bc" if current == f"-{column}" else ""


def _pages(request, page: int, rows: int) -> dict:
    total = max(1, (rows + CLIPS_PER_PAGE - 1) // CLIPS_PER_PAGE)

    def link(number):
        return "?" + urlencode({**request.GET.dict(), "clips_page": number}) + "#drilldown"

    return {
        "number": page + 1,
        "total": total,
        "previous": link(page) if page > 0 else None,
        "next": link(page + 2) if page + 1 < total else None,
    }


@require_safe
def agreement_report_clip(request, study_id: int, clip: str, *, admin_site):
    """One clip: its audio, its words, each annotator's level of each word, and its drill-down row
    from the report it was opened from (`report` query parameter), when that report has one."""
    study = get_study_for_staff(
        request, study_id, perm="evaluation.view_agreementreport", capability="answers_are_word_marks"
    )
    named = sees_prolific_ids(request.user)
    marks = clip_marks(study=study, external_id=clip, named=named)
    if marks is None:
        raise Http404(f"{study.slug} has no clip {clip!r}")
    report_row = _report_row(study, request.GET.get("report"), clip)
    audio = signed_audio_url(marks.clip.browser_audio.name) if marks.clip.browser_audio else None
    annotations = [
        {**row, "cells": [{"level": level, "title": LEVEL_NAMES.get(level, "")} for level in row["levels"]]}
        for row in marks.annotations
    ]
    marked = [
        sum(1 for row in marks.annotations if len(row["levels"]) > i and row["levels"][i] > 0)
        for i in range(len(marks.words))
    ]
    return TemplateResponse(
        request,
        "evaluation/agreement_clip.html",
        {
            **admin_site.each_context(request),
            "title": f"Clip {clip}: marks word by word",
            "study": study,
            "clip": marks.clip,
            "words": list(zip(marks.words, marked)),
            "annotations": annotations,
            "audio_url": audio,
            "report_row": report_row,
            "sees_prolific_ids": named,
            "report_page": reverse("admin:evaluation_agreementreport_study", args=[study.pk]),
        },
    )


def _report_row(study: Study, report_pk: str | None, clip: str) -> dict | None:
    if not report_pk or not report_pk.isdigit():
        return None
    report = AgreementReport.objects.filter(
        pk=int(report_pk), study=study, status=AgreementReport.Status.SUCCEEDED
    ).first()
    section = json.loads(report.result_json).get("drilldown") if report else None
    if section is None:
        return None
    return next((row for row in clip_rows(section) if row["clip"] == clip), None)
