"""The OpenAPI schema: valid OpenAPI 3, complete (generated without a warning), and readable
offline in Swagger UI and ReDoc, whose files come from drf-spectacular-sidecar, not a CDN."""

import re

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db


def test_the_schema_validates_as_openapi_3(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    validate(schema)
    assert "/api/v1/studies/{id}/status/" in schema["paths"]
    assert "/api/v1/dataset-exports/{id}/link/" in schema["paths"]


def test_the_schema_is_generated_without_a_warning(tmp_path):
    # A warning means an endpoint whose request or response the generator had to guess.
    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "schema.yaml"))


def test_every_operation_names_its_responses_and_needs_a_sign_in(client):
    schema = client.get("/api/schema/?format=json").json()

    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert operation["responses"], f"{method} {path}"
            assert {"tokenAuth": []} in operation["security"], f"{method} {path}"
            assert {} not in operation["security"], f"{method} {path} allows anonymous callers"


@pytest.mark.parametrize("page", ["/api/docs/", "/api/redoc/"])
def test_the_docs_pages_load_their_scripts_from_this_server(client, page):
    response = client.get(page)

    assert response.status_code == 200
    html = response.content.decode()
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', html)
    assert scripts
    for src in scripts:
        assert src.startswith("/static/drf_spectacular_sidecar/"), src
        assert finders.find(src.removeprefix("/static/")), src
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html
