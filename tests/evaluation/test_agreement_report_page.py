"""The report page in the admin: permissions, computing in the background, progress, tables, plots, downloads."""

import csv
import io
import json

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from evaluation.models import AgreementReport
from evaluation.services.agreement_reports import agreement_report_request, report_parameters
from tests.annotation.factories import StudyFactory
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db
QUERY = {
    "language": "",
    "subsample": 6,
    "seed": 0,
    "resamples": 100,
    "min_kappa": 0.1,
    "min_attention": 1.0,
    "min_time_ratio": 1.0,
}


@pytest.fixture
def study():
    return golden_study()


def page_url(study):
    return reverse("admin:evaluation_agreementreport_study", args=[study.pk])


def staff(client, *codenames):
    user = User.objects.create_user("researcher", password="x", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="evaluation", codename__in=codenames))
    client.force_login(user)
    return user


def compute(client, study, django_capture_on_commit_callbacks, **changes):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(page_url(study), {**QUERY, **changes})
    assert response.status_code == 302
    return client.get(response["Location"])


def test_anonymous_users_are_sent_to_login(client, study):
    response = client.get(page_url(study))

    assert response.status_code == 302 and "/login/" in response["Location"]


def test_staff_without_the_view_permission_are_refused(client, study):
    staff(client)

    assert client.get(page_url(study)).status_code == 403


def test_viewers_may_not_start_a_report(client, study):
    staff(client, "view_agreementreport")

    page = client.get(page_url(study))
    assert page.status_code == 200 and "You may view reports but not start one" in page.content.decode()
    assert client.post(page_url(study), QUERY).status_code == 403
    assert not AgreementReport.objects.exists()


def test_computing_a_report_shows_tables_plots_and_downloads(admin_client, study, django_capture_on_commit_callbacks):
    first = admin_client.get(page_url(study)).content.decode()
    assert "Compute the report" in first

    page = compute(admin_client, study, django_capture_on_commit_callbacks)

    html = page.content.decode()
    report = AgreementReport.objects.get()
    assert report.status == AgreementReport.Status.SUCCEEDED and report.created_by.username == "admin"
    for text in (
        "Agreement by language",
        "Fleiss&#x27; kappa",
        "Scalar scores of the words",
        "Annotators: agreement and marking",
        "<svg",
        "Mismatch reports",
        "000000000000000000000006",
    ):
        assert text in html, text
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" viewBox') == 3  # the admin has icons too
    assert reverse("admin:evaluation_agreementreport_json", args=[report.pk]) in html
    assert "?language=de&amp;" in html  # links to the per-language pages


def test_the_page_shows_the_new_measures_with_their_methods(admin_client, study, django_capture_on_commit_callbacks):
    html = compute(admin_client, study, django_capture_on_commit_callbacks).content.decode()

    for text in (
        "Gwet's AC1 [95 % CI]",
        "Gwet's AC2, quadratic",
        "alpha ratio",
        "Three levels (0, 1, 2)",
        "Light&#x27;s kappa (Light 1971)",
        "Fleiss, Cohen &amp; Everitt (1969)",
        "Gwet 2008",
        "Krippendorff 2011",
        "no interval: too few clips for an interval",
        "time / clip length",
    ):
        assert text in html, text


def test_a_report_stored_before_the_new_measures_still_shows(admin_client, study, django_capture_on_commit_callbacks):
    compute(admin_client, study, django_capture_on_commit_callbacks)
    report = AgreementReport.objects.get()
    old = json.loads(report.result_json)
    groups = [old["agreement"]["pooled"]]
    groups += [
        group for dimension in ("language", "variety", "emotion") for group in old["agreement"][dimension].values()
    ]
    for group in groups:
        del group["gwet"], group["cohen"]["levels"], group["krippendorff"]["ratio"]
    for row in old["annotators"]["rows"]:
        del row["median_time_ratio"]
    AgreementReport.objects.filter(pk=report.pk).update(result_json=json.dumps(old))

    page = admin_client.get(page_url(study), QUERY)
    csv_download = admin_client.get(reverse("admin:evaluation_agreementreport_csv", args=[report.pk]))

    assert page.status_code == 200 and "not in this report" in page.content.decode()
    assert csv_download.status_code == 200 and ",gwet_ac1," not in csv_download.content.decode()


def test_a_second_visit_uses_the_cached_report(admin_client, study, django_capture_on_commit_callbacks):
    compute(admin_client, study, django_capture_on_commit_callbacks)

    page = admin_client.get(page_url(study), QUERY)

    assert AgreementReport.objects.count() == 1
    assert page.context["report"].status == AgreementReport.Status.SUCCEEDED


def test_a_per_language_report(admin_client, study, django_capture_on_commit_callbacks):
    page = compute(admin_client, study, django_capture_on_commit_callbacks, language="de")

    assert page.context["result"]["scope"] == {"language": "de"}
    assert set(page.context["result"]["agreement"]["language"]) == {"de"}


def test_progress_polls_until_the_report_finishes(admin_client, study):
    report = agreement_report_request(study=study, parameters=report_parameters(study=study))  # queued: no commit
    url = reverse("admin:evaluation_agreementreport_progress", args=[report.pk])

    running = admin_client.get(url, HTTP_HX_REQUEST="true")
    assert running.status_code == 200 and f'hx-get="{url}"' in running.content.decode()
    assert "waiting for a worker" in running.content.decode()

    AgreementReport.objects.filter(pk=report.pk).update(status=AgreementReport.Status.SUCCEEDED, done=5, total=5)
    finished = admin_client.get(url, HTTP_HX_REQUEST="true")
    assert finished.status_code == 286 and finished["HX-Refresh"] == "true"
    assert "hx-get" not in finished.content.decode()


def test_the_page_shows_progress_while_queued(admin_client, study):
    agreement_report_request(study=study, parameters=report_parameters(study=study))

    html = admin_client.get(page_url(study)).content.decode()

    assert 'id="report-progress"' in html and "every 1s" in html


@pytest.mark.parametrize("kind", ["json", "csv"])
def test_a_download_of_a_report_not_ready_answers_409_and_where_to_follow_it(admin_client, study, kind):
    report = agreement_report_request(study=study, parameters=report_parameters(study=study))  # queued: no commit
    url = reverse(f"admin:evaluation_agreementreport_{kind}", args=[report.pk])

    queued = admin_client.get(url)
    AgreementReport.objects.filter(pk=report.pk).update(status=AgreementReport.Status.FAILED, error="out of memory")
    failed = admin_client.get(url)

    assert queued.status_code == 409 and queued["Retry-After"] == "5"
    assert "The agreement report: not ready yet" in queued.content.decode()
    assert f"http://testserver{page_url(study)}?" in queued.content.decode()
    assert failed.status_code == 409 and "Retry-After" not in failed
    assert "The agreement report failed: out of memory" in failed.content.decode()


def test_downloads_are_the_stored_json_and_a_csv(admin_client, study, django_capture_on_commit_callbacks):
    compute(admin_client, study, django_capture_on_commit_callbacks)
    report = AgreementReport.objects.get()

    as_json = admin_client.get(reverse("admin:evaluation_agreementreport_json", args=[report.pk]))
    as_csv = admin_client.get(reverse("admin:evaluation_agreementreport_csv", args=[report.pk]))

    assert as_json.content.decode() == report.result_json
    assert as_json["Content-Disposition"] == f'attachment; filename="agreement-golden-all-{report.pk}.json"'
    rows = list(csv.DictReader(io.StringIO(as_csv.content.decode())))
    assert as_csv["Content-Type"].startswith("text/csv")
    assert {row["measure"] for row in rows if row["section"] == "agreement"} >= {
        "cohen_mean_pairwise",
        "fleiss",
        "krippendorff_ordinal",
    }


def test_bad_parameters_are_shown_and_nothing_is_computed(admin_client, study):
    page = admin_client.get(page_url(study), {**QUERY, "subsample": 1})

    assert page.status_code == 400 and "at least 2 annotations per clip" in page.content.decode()
    assert admin_client.post(page_url(study), {**QUERY, "subsample": 1}).status_code == 400
    assert not AgreementReport.objects.exists()


def test_the_report_list_links_every_study(admin_client, study):
    html = admin_client.get(reverse("admin:evaluation_agreementreport_changelist")).content.decode()

    assert page_url(study) in html


def test_listening_form_studies_have_no_agreement_report(admin_client):
    form_study = StudyFactory(kind="form")

    assert admin_client.get(page_url(form_study)).status_code == 404
    listed = admin_client.get(reverse("admin:evaluation_agreementreport_changelist")).content.decode()
    assert page_url(form_study) not in listed


def test_a_link_with_some_parameters_keeps_the_defaults_for_the_others(admin_client, study):
    page = admin_client.get(page_url(study), {"language": "de"})

    parameters = page.context["parameters"]
    assert (parameters.language, parameters.subsample, parameters.resamples) == ("de", None, 1000)
    assert parameters.thresholds.min_kappa == 0.1 and not parameters.exclude_flagged
    off = admin_client.get(page_url(study), {"language": "de", "min_kappa": ""}).context["parameters"]
    assert off.thresholds.min_kappa is None  # an empty threshold turns the flag off
