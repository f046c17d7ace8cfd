"""Every endpoint against every kind of caller: anonymous 401, a participant's study cookie 401,
staff without the endpoint's permission 403, staff with it through (2xx)."""

from dataclasses import dataclass, field

import pytest

from tests.annotation.factories import ParticipantFactory, StudyFactory
from tests.api.callers import participant_client, staff_with, token_client
from tests.api.world import World

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str  # formatted with the World's objects' ids, e.g. {study}
    perms: tuple[str, ...]
    body: dict = field(default_factory=dict)  # string values "{name}" become that object's id

    def __str__(self):
        return f"{self.method.upper()} {self.path} {self.body or ''}".strip()


ENDPOINTS = [
    Endpoint("get", "/api/v1/corpora/", ("annotation.view_corpus",)),
    Endpoint("get", "/api/v1/corpora/{corpus}/", ("annotation.view_corpus",)),
    Endpoint("get", "/api/v1/clips/", ("annotation.view_clip",)),
    Endpoint("get", "/api/v1/clips/{clip}/", ("annotation.view_clip",)),
    Endpoint("get", "/api/v1/studies/", ("annotation.view_study",)),
    Endpoint("get", "/api/v1/studies/{study}/", ("annotation.view_study",)),
    Endpoint("post", "/api/v1/studies/{study}/status/", ("annotation.change_study",), {"status": "live"}),
    Endpoint("get", "/api/v1/studies/{study}/annotations/", ("annotation.view_annotation",)),
    Endpoint(
        "get",
        "/api/v1/studies/{study}/annotations/?prolific_ids=true",
        ("annotation.view_annotation", "annotation.change_participant"),
    ),
    Endpoint("get", "/api/v1/prolific-studies/", ("prolific.view_prolificstudy",)),
    Endpoint("post", "/api/v1/prolific-studies/", ("prolific.add_prolificstudy",), {"study": "{study}"}),
    Endpoint("get", "/api/v1/prolific-studies/{prolific_study}/", ("prolific.view_prolificstudy",)),
    Endpoint("patch", "/api/v1/prolific-studies/{prolific_study}/", ("prolific.change_prolificstudy",), {"places": 7}),
    Endpoint("get", "/api/v1/prolific-studies/{prolific_study}/cost/", ("prolific.view_prolificstudy",)),
    Endpoint(
        "post",
        "/api/v1/prolific-studies/{prolific_study}/actions/",
        ("prolific.change_prolificstudy",),
        {"action": "sync"},
    ),
    Endpoint("get", "/api/v1/prolific-study-jobs/{prolific_job}/", ("prolific.view_prolificstudy",)),
    Endpoint("get", "/api/v1/agreement-reports/", ("evaluation.view_agreementreport",)),
    Endpoint(
        "post",
        "/api/v1/agreement-reports/",
        ("evaluation.add_agreementreport",),
        {"study": "{study}", "parameters": {"resamples": 0}},
    ),
    Endpoint("get", "/api/v1/agreement-reports/{report}/", ("evaluation.view_agreementreport",)),
    Endpoint("get", "/api/v1/label-sets/", ("evaluation.view_labelset",)),
    Endpoint(
        "post",
        "/api/v1/label-sets/",
        ("evaluation.add_labelset",),
        {"name": "new labels", "studies": ["{study}"], "parameters": {"resamples": 0}},
    ),
    Endpoint("get", "/api/v1/label-sets/{draft}/", ("evaluation.view_labelset",)),
    Endpoint("delete", "/api/v1/label-sets/{draft}/", ("evaluation.delete_labelset",)),
    Endpoint("post", "/api/v1/label-sets/{draft}/finalize/", ("evaluation.change_labelset",)),
    Endpoint("post", "/api/v1/label-sets/{final}/archive/", ("evaluation.change_labelset",)),
    Endpoint("get", "/api/v1/label-sets/{draft}/rows/", ("evaluation.view_labelset",)),
    Endpoint("get", "/api/v1/dataset-exports/", ("evaluation.view_datasetexport",)),
    Endpoint(
        "post",
        "/api/v1/dataset-exports/",
        ("evaluation.add_datasetexport", "evaluation.view_labelset"),
        {"format": "csv", "label_set": "{final}"},
    ),
    Endpoint(
        "post",
        "/api/v1/dataset-exports/",
        ("evaluation.add_datasetexport", "annotation.view_annotation", "annotation.change_participant"),
        {"format": "raw", "study": "{study}", "include_prolific_ids": True},
    ),
    Endpoint("get", "/api/v1/dataset-exports/{export}/", ("evaluation.view_datasetexport",)),
    # A download reads what the export holds, as asking for it does (the World's export is of a label set).
    Endpoint(
        "get", "/api/v1/dataset-exports/{export}/link/", ("evaluation.view_datasetexport", "evaluation.view_labelset")
    ),
]


class Ids(dict):
    """{name} in a path or body -> the id of the World's object of that name, made on demand."""

    def __init__(self, world: World):
        super().__init__()
        self.world = world

    def __missing__(self, name: str) -> int:
        return getattr(self.world, name).pk


class NoIds(dict):
    """Ids of nothing: a caller refused before any lookup never learns whether they exist."""

    def __missing__(self, name: str) -> int:
        return 999_999


def call(client, endpoint: Endpoint, ids: dict):
    return getattr(client, endpoint.method)(endpoint.path.format_map(ids), _filled(endpoint.body, ids), format="json")


def _filled(value, ids):
    if isinstance(value, dict):
        return {key: _filled(item, ids) for key, item in value.items()}
    if isinstance(value, list):
        return [_filled(item, ids) for item in value]
    if isinstance(value, str) and value.startswith("{"):
        return int(value.format_map(ids))
    return value


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    return World(django_capture_on_commit_callbacks)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_anonymous_callers_get_401(endpoint, client):
    response = call(client, endpoint, NoIds())

    assert response.status_code == 401, response.content
    assert response["WWW-Authenticate"] == "Token"  # what makes it a 401: the client is told how to sign in
    assert "detail" in response.json()


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_a_participant_study_cookie_is_no_sign_in(endpoint):
    participant = ParticipantFactory(study=StudyFactory(slug="voices"))
    browser = participant_client(participant)
    assert browser.cookies["p_voices"].value  # the cookie the participant pages recognize

    response = call(browser, endpoint, NoIds())

    assert response.status_code == 401, response.content


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_staff_without_the_permission_get_403(endpoint, world):
    ids = Ids(world) if len(endpoint.perms) > 1 else NoIds()  # extra permissions are checked on real objects
    callers = [staff_with()] + [staff_with(*(set(endpoint.perms) - {missing})) for missing in endpoint.perms]
    for user in callers:
        response = call(token_client(user), endpoint, ids)

        assert response.status_code == 403, (user.get_all_permissions(), response.content)
        assert response.json() == {"detail": "You do not have permission to perform this action."}


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_staff_with_the_permission_get_through(endpoint, world):
    response = call(token_client(staff_with(*endpoint.perms)), endpoint, Ids(world))

    assert 200 <= response.status_code < 300, response.content


def test_the_endpoint_list_needs_only_a_sign_in(client):
    assert client.get("/api/v1/").status_code == 401
    response = token_client(staff_with()).get("/api/v1/")
    assert response.status_code == 200
    assert response.json()["studies"].endswith("/api/v1/studies/")


def test_inactive_users_are_refused_by_token_and_by_session(client):
    user = staff_with("annotation.view_study", active=False)
    assert token_client(user).get("/api/v1/studies/").status_code == 401
    client.force_login(user)
    assert client.get("/api/v1/studies/").status_code == 401


def test_a_wrong_token_is_refused():
    client = token_client(staff_with("annotation.view_study"))
    client.credentials(HTTP_AUTHORIZATION="Token not-a-key")

    response = client.get("/api/v1/studies/")

    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


def test_the_session_serves_the_browsable_api_but_needs_csrf_for_writes(client):
    user = staff_with("annotation.view_study", "annotation.change_study")
    study = StudyFactory()
    client.force_login(user)

    page = client.get("/api/v1/studies/", HTTP_ACCEPT="text/html")
    assert page.status_code == 200
    assert b"Django REST framework" in page.content

    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    refused = strict.post(f"/api/v1/studies/{study.pk}/status/", {"status": "live"}, content_type="application/json")
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["detail"]
