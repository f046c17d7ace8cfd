"""Suite reports through the API: a request names the suite and its subject, validation names the
field, the result (the suite page's JSON) comes once the report has succeeded."""

import pytest
from django.core.management import call_command

from annotation.models import Study
from evaluation.models import CastSet, SuiteReport
from tests.annotation.factories import StudyFactory
from tests.api.callers import staff_with, token_client
from tests.evaluation.suites.fixtures import import_stance_study, stance_outputs, write_jsonl

pytestmark = pytest.mark.django_db
REPORTS = "/api/v1/suite-reports/"


@pytest.fixture
def study(tmp_path):
    study = import_stance_study(tmp_path / "form")
    path = write_jsonl(tmp_path / "judge.jsonl", stance_outputs())
    call_command("import_system_outputs", str(path), "--suite", "stance", "--system", "judge", "--study", study.slug)
    return study


@pytest.fixture
def api():
    return token_client(
        staff_with(
            "evaluation.add_suitereport",
            "evaluation.view_suitereport",
            "annotation.view_study",
            "evaluation.view_castset",
        )
    )


def test_a_request_is_queued_then_polled_to_its_result(api, study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(REPORTS, {"suite": "stance", "study": study.pk, "resamples": 50, "seed": 2}, format="json")
    assert response.status_code == 202, response.json()
    assert response["Location"] == f"http://testserver{REPORTS}{response.json()['id']}/"
    body = api.get(response["Location"]).json()
    assert body["status"] == "succeeded" and (body["resamples"], body["seed"]) == (50, 2)
    [judge] = body["result"]["tables"]["per_dimension"]["warmth"]
    assert judge["row"] == "judge" and judge["failure_rate"] == 0 and judge["auroc"]["value"] == 1.0


def test_the_same_request_gives_the_same_report(api, study):
    first = api.post(REPORTS, {"suite": "stance", "study": study.pk}, format="json").json()
    second = api.post(REPORTS, {"suite": "stance", "study": study.pk}, format="json").json()
    assert first["id"] == second["id"] and SuiteReport.objects.count() == 1


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"suite": "stance"}, "study"),
        ({"suite": "cast"}, "cast_set"),
        ({"suite": "tts"}, "suite"),
        ({"suite": "stance", "resamples": 0}, "resamples"),
    ],
)
def test_a_bad_request_names_the_field(api, study, given, field):
    if given.get("resamples") == 0:
        given = {**given, "study": study.pk}
    response = api.post(REPORTS, given, format="json")
    assert response.status_code == 400 and field in response.json(), response.json()


def test_an_emphasis_study_or_a_study_given_to_cast_is_refused(api, study):
    emphasis = StudyFactory(kind=Study.Kind.EMPHASIS)
    response = api.post(REPORTS, {"suite": "stresstest", "study": emphasis.pk}, format="json")
    assert response.status_code == 400 and "not a listening-form study" in str(response.json())
    cast_set = CastSet.objects.create(name="cast pilot")
    response = api.post(REPORTS, {"suite": "cast", "cast_set": cast_set.pk, "study": study.pk}, format="json")
    assert response.status_code == 400 and "study" in response.json()


def test_without_the_permissions_nothing_is_queued(study):
    reader = token_client(staff_with("evaluation.view_suitereport"))
    assert reader.post(REPORTS, {"suite": "stance", "study": study.pk}, format="json").status_code == 403
    assert token_client(staff_with()).get(REPORTS).status_code == 403
    assert SuiteReport.objects.count() == 0


def test_the_result_needs_the_subjects_permission_too(api, study):
    """It holds gold answers and every system's outputs, as the suite page does."""
    created = api.post(REPORTS, {"suite": "stance", "study": study.pk}, format="json").json()
    without_study = token_client(staff_with("evaluation.add_suitereport", "evaluation.view_suitereport"))
    assert without_study.get(f"{REPORTS}{created['id']}/").status_code == 403
    assert without_study.post(REPORTS, {"suite": "stance", "study": study.pk}, format="json").status_code == 403
