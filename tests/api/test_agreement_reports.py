"""Agreement reports: parameters default to the study's, validation names the field, the result
comes once the report has succeeded."""

import pytest

from annotation.models import Study
from evaluation.models import AgreementReport
from tests.annotation.factories import StudyFactory
from tests.api.callers import staff_with, token_client
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return golden_study()


@pytest.fixture
def api():
    return token_client(staff_with("evaluation.add_agreementreport", "evaluation.view_agreementreport"))


def ask(api, study, **parameters):
    return api.post("/api/v1/agreement-reports/", {"study": study.pk, "parameters": parameters}, format="json")


def test_parameters_not_given_are_the_studys(api, study):
    response = ask(api, study, seed=4, thresholds={"min_kappa": 0.3})

    assert response.status_code == 202
    parameters = response.json()["parameters"]
    assert parameters["subsample"] is None  # every usable annotation (issue 33), not the target
    assert parameters["seed"] == 4 and parameters["resamples"] == 1000
    assert parameters["thresholds"]["min_kappa"] == 0.3
    assert parameters["thresholds"]["min_attention"] == study.review_min_attention
    assert parameters["thresholds"]["min_time_ratio"] == study.review_min_time_ratio
    assert response["Location"] == f"http://testserver/api/v1/agreement-reports/{response.json()['id']}/"


def test_the_same_request_gives_the_same_report(api, study):
    first = ask(api, study, resamples=10).json()
    second = ask(api, study, resamples=10).json()

    assert first["id"] == second["id"] and first["status"] == "queued"
    assert AgreementReport.objects.count() == 1


def test_null_subsample_uses_every_annotation_and_language_scopes(api, study):
    parameters = ask(api, study, subsample=None, language="de").json()["parameters"]

    assert parameters["subsample"] is None and parameters["language"] == "de"


@pytest.mark.parametrize(
    ("parameters", "errors"),
    [
        ({"subsample": 1}, {"parameters": {"subsample": ["Ensure this value is greater than or equal to 2."]}}),
        ({"resamples": -1}, {"parameters": {"resamples": ["Ensure this value is greater than or equal to 0."]}}),
        ({"language": "fr"}, {"parameters": {"language": ["not a language of golden (it has: de, en, zh)"]}}),
        (
            {"thresholds": {"min_attention": 2}},
            {"parameters": {"thresholds": {"min_attention": ["Ensure this value is less than or equal to 1."]}}},
        ),
    ],
)
def test_bad_parameters_name_their_field(api, study, parameters, errors):
    response = ask(api, study, **parameters)

    assert response.status_code == 400
    assert response.json() == errors


def test_only_emphasis_studies_have_agreement_reports(api):
    form = StudyFactory(kind=Study.Kind.LISTENING_FORM, slug="voices")

    response = api.post("/api/v1/agreement-reports/", {"study": form.pk}, format="json")

    assert response.status_code == 400
    assert response.json() == {"study": ["voices is a listening form; agreement reports are of emphasis studies"]}


def test_a_succeeded_report_shows_its_result(api, study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        report_id = ask(api, study, resamples=20).json()["id"]

    report = api.get(f"/api/v1/agreement-reports/{report_id}/").json()

    assert report["status"] == "succeeded", report["error"]
    assert report["done"] == report["total"]
    assert report["result"]["format"] == "emphasis-agreement-report/1"
    listed = api.get("/api/v1/agreement-reports/", {"study": study.pk}).json()["results"]
    assert [row["id"] for row in listed] == [report_id] and "result" not in listed[0]


def test_an_unfinished_report_has_no_result_yet(api, study):
    report_id = ask(api, study).json()["id"]

    report = api.get(f"/api/v1/agreement-reports/{report_id}/").json()

    assert report["status"] == "queued" and report["result"] is None
