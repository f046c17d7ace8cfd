"""The drill-down on the report page and a clip's page, server-side: sorting, paging, names, access."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from evaluation.models import AgreementReport
from tests.evaluation.builders import golden_study
from tests.evaluation.test_agreement_report_page import compute, page_url, staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return golden_study()


def clip_url(study, clip):
    return reverse("admin:evaluation_agreementreport_clip", args=[study.pk, clip])


def test_the_page_lists_clips_lowest_agreement_first_and_sorts_by_a_column(
    client, study, django_capture_on_commit_callbacks
):
    staff(client, "view_agreementreport", "add_agreementreport")
    page = compute(client, study, django_capture_on_commit_callbacks)
    rows = page.context["drilldown_clips"]
    assert len(rows) == 10 and [r["agreement"] for r in rows] == sorted(r["agreement"] for r in rows)
    assert rows[0]["url"].startswith(clip_url(study, rows[0]["clip"]))
    assert b'id="drilldown-pairs"' in page.content and b'id="drilldown-positions"' in page.content

    query = {**dict(page.context["hidden_fields"]), "sort": "-mismatch_reports"}
    by_mismatch = client.get(page_url(study), query)
    reports = [r["mismatch_reports"] for r in by_mismatch.context["drilldown_clips"]]
    assert reports == sorted(reports, reverse=True) and reports[0] == 3  # clip-07: three reports
    assert by_mismatch.context["drilldown_clips"][0]["clip"] == "clip-07"


def test_a_clip_page_shows_every_annotator_word_by_word_and_names_only_with_the_permission(
    client, study, django_capture_on_commit_callbacks
):
    user = staff(client, "view_agreementreport", "add_agreementreport")
    compute(client, study, django_capture_on_commit_callbacks)
    report = AgreementReport.objects.get()

    page = client.get(clip_url(study, "clip-07"), {"report": report.pk})

    assert page.status_code == 200
    annotations = page.context["annotations"]
    assert len(annotations) == 6 and all(row["annotator"].startswith("a-") for row in annotations)
    assert all(len(row["cells"]) == len(page.context["words"]) for row in annotations)
    assert sum(row["mismatch_reported"] for row in annotations) == 3
    assert page.context["report_row"]["mismatch_reports"] == 3
    assert b"000000000000000000000001" not in page.content  # no Prolific id without the permission
    user.user_permissions.add(
        Permission.objects.get(codename="change_participant", content_type__app_label="annotation")
    )
    named = client.get(clip_url(study, "clip-07"))
    assert b"000000000000000000000001" in named.content
    assert client.get(clip_url(study, "no-such-clip")).status_code == 404


def test_the_clip_page_needs_the_view_permission(client, study):
    staff(client)
    assert client.get(clip_url(study, "clip-07")).status_code == 403
