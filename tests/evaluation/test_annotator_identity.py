"""One annotator identity in every artefact of a study (issue 20, defect 2).

The agreement report (stored result, page, JSON and CSV downloads, command, API), the review page,
label sets and exports all name an annotator by the same opaque id (a-<16 hex>); the Prolific id
is shown only to holders of annotation.change_participant, beside that id.
"""

import csv
import io
import json

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.urls import reverse

from annotation.participant_names import opaque_annotator_id
from evaluation.forms import parameters_query
from evaluation.models import AgreementReport
from evaluation.services.agreement_reports import agreement_report_request, report_parameters
from tests.annotation.factories import ParticipantFactory
from tests.api.callers import staff_with, token_client
from tests.evaluation.builders import golden_study
from tests.evaluation.export_builders import final_label_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return golden_study()


def pids(study) -> list[str]:
    return list(study.participants.exclude(prolific_pid="").values_list("prolific_pid", flat=True))


def opaque_ids(study) -> set[str]:
    return {opaque_annotator_id(study.slug, pid) for pid in pids(study)}


def computed(study, capture) -> AgreementReport:
    with capture(execute=True):
        report = agreement_report_request(study=study, parameters=report_parameters(study=study, resamples=0))
    report.refresh_from_db()
    assert report.status == AgreementReport.Status.SUCCEEDED, report.error
    return report


def staff(client, *perms):
    user = User.objects.create_user("viewer", password="x", is_staff=True)
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    client.force_login(user)
    return user


def assert_no_prolific_id(text: str, study) -> None:
    leaked = [pid for pid in pids(study) if pid in text]
    assert not leaked, f"Prolific ids in the artefact: {leaked}"


def test_the_report_names_annotators_as_the_label_set_does(study, django_capture_on_commit_callbacks):
    report = computed(study, django_capture_on_commit_callbacks)
    label_set = final_label_set(study, django_capture_on_commit_callbacks)

    result = json.loads(report.result_json)
    reported = {row["annotator"] for row in result["annotators"]["rows"]}
    in_set = {a for clip in label_set.clips.all() for a in clip.annotators}
    assert reported == opaque_ids(study)
    assert in_set <= reported and in_set
    assert_no_prolific_id(report.result_json, study)


def test_downloads_and_the_api_hold_no_prolific_ids(client, study, django_capture_on_commit_callbacks):
    report = computed(study, django_capture_on_commit_callbacks)
    staff(client, "evaluation.view_agreementreport")

    for kind in ("json", "csv"):
        response = client.get(reverse(f"admin:evaluation_agreementreport_{kind}", args=[report.pk]))
        assert response.status_code == 200
        assert_no_prolific_id(response.content.decode(), study)
    api = token_client(staff_with("evaluation.view_agreementreport"))
    detail = api.get(f"/api/v1/agreement-reports/{report.pk}/")
    assert detail.status_code == 200
    assert_no_prolific_id(detail.content.decode(), study)
    assert {row["annotator"] for row in detail.json()["result"]["annotators"]["rows"]} == opaque_ids(study)


def test_the_csv_annotator_rows_are_opaque(client, study, django_capture_on_commit_callbacks):
    report = computed(study, django_capture_on_commit_callbacks)
    staff(client, "evaluation.view_agreementreport")

    response = client.get(reverse("admin:evaluation_agreementreport_csv", args=[report.pk]))
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert {row["group"] for row in rows if row["section"] == "annotator"} == opaque_ids(study)


def test_the_command_prints_no_prolific_ids(study, tmp_path):
    out = io.StringIO()
    call_command("agreement_report", study.slug, "--resamples", "0", "--json", tmp_path / "r.json", stdout=out)

    assert_no_prolific_id(out.getvalue() + (tmp_path / "r.json").read_text(), study)


def test_the_report_page_shows_prolific_ids_only_with_the_participant_permission(
    client, study, django_capture_on_commit_callbacks
):
    computed(study, django_capture_on_commit_callbacks)
    url = f"{reverse('admin:evaluation_agreementreport_study', args=[study.pk])}?{parameters_query(report_parameters(study=study, resamples=0))}"
    user = staff(client, "evaluation.view_agreementreport")

    page = client.get(url).content.decode()
    assert "a-" in page and all(i in page for i in opaque_ids(study)), "the table shows the opaque ids"
    assert_no_prolific_id(page, study)

    user.user_permissions.add(Permission.objects.get(codename="change_participant"))
    user = User.objects.get(pk=user.pk)  # drop the permission cache
    client.force_login(user)
    page = client.get(url).content.decode()
    assert all(pid in page for pid in pids(study))
    assert all(i in page for i in opaque_ids(study))


def test_the_review_page_shows_the_reports_annotator_ids(client, study):
    staff(client, "annotation.view_participant", "annotation.change_participant")

    page = client.get(reverse("admin:annotation_participant_review", args=[study.pk])).content.decode()
    assert all(i in page for i in opaque_ids(study))
    assert all(pid in page for pid in pids(study))


def test_the_participant_list_shows_display_names_beside_annotator_ids(client, study):
    local = ParticipantFactory(study=study, prolific_pid="")
    staff(client, "annotation.view_participant", "annotation.change_participant")

    page = client.get(reverse("admin:annotation_participant_changelist")).content.decode()

    assert f"local #{local.pk}" in page and opaque_annotator_id(study.slug, f"local-{local.pk}") in page
    assert all(pid in page for pid in pids(study) if pid) and all(i in page for i in opaque_ids(study))


def test_who_may_only_view_participants_never_sees_a_prolific_id(client, study):
    participant = ParticipantFactory(study=study, prolific_pid="5f0c3a9e1b2d4c6e8f0a1b2c")
    staff(client, "annotation.view_participant", "annotation.view_annotation")

    listing = client.get(reverse("admin:annotation_participant_changelist")).content.decode()
    detail = client.get(reverse("admin:annotation_participant_change", args=[participant.pk])).content.decode()
    annotations = client.get(reverse("admin:annotation_annotation_changelist")).content.decode()

    for page in (listing, detail, annotations):
        assert participant.prolific_pid not in page
        assert participant.prolific_session_id not in page
    assert opaque_annotator_id(study.slug, participant.prolific_pid) in listing


def test_who_may_decide_sees_the_display_name_beside_the_annotator_id(client, study):
    participant = ParticipantFactory(study=study, prolific_pid="5f0c3a9e1b2d4c6e8f0a1b2c")
    staff(client, "annotation.view_participant", "annotation.change_participant")

    listing = client.get(reverse("admin:annotation_participant_changelist"), {"q": participant.prolific_pid})

    page = listing.content.decode()
    assert participant.prolific_pid in page and opaque_annotator_id(study.slug, participant.prolific_pid) in page
