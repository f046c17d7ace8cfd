"""Every error is JSON: {"detail": ...} or {"<field>": [...]}, whatever went wrong."""

import pytest

from tests.annotation.factories import StudyFactory
from tests.api.callers import staff_with, token_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return token_client(staff_with("annotation.view_study", "annotation.change_study"))


def test_a_path_that_names_no_endpoint_is_404_json(api, client):
    for path in ("/api/v1/nothing/", "/api/v1/studies", "/api/v1/studies/1/nothing/"):
        for caller in (api, client):
            response = caller.get(path)
            assert response.status_code == 404, path
            assert response.json()["detail"].startswith("No such endpoint"), path


def test_a_method_an_endpoint_lacks_is_405_json(api):
    study = StudyFactory()

    response = api.put(f"/api/v1/studies/{study.pk}/", {"name": "renamed"}, format="json")

    assert response.status_code == 405
    assert response.json() == {"detail": 'Method "PUT" not allowed.'}


def test_malformed_json_is_400_json(api):
    study = StudyFactory()

    response = api.post(f"/api/v1/studies/{study.pk}/status/", "{not json", content_type="application/json")

    assert response.status_code == 400
    assert response.json()["detail"].startswith("JSON parse error")


def test_a_missing_field_is_named(api):
    study = StudyFactory()

    response = api.post(f"/api/v1/studies/{study.pk}/status/", {}, format="json")

    assert response.json() == {"status": ["This field is required."]}


def test_a_list_of_messages_becomes_non_field_errors():
    from rest_framework.exceptions import ValidationError

    from annotation.shared.api.errors import exception_handler

    response = exception_handler(ValidationError("the set is empty"), {})

    assert response.data == {"non_field_errors": ["the set is empty"]}


def test_json_nested_too_deeply_is_400_json(api):
    study = StudyFactory()
    nested = "[" * 50000 + "]" * 50000

    response = api.post(f"/api/v1/studies/{study.pk}/status/", nested, content_type="application/json")

    assert response.status_code == 400
    assert response.json()["detail"].startswith("JSON parse error")
