"""The published API stays what clients were given: the schema generated from the code is the one
in tests/api/fixtures/openapi_v1.json, the schema of /api/v1/ when the API was split into one
package per app (annotation/api, evaluation/api, modelzoo/api).

A deliberate change of the API (a new endpoint, field or parameter) changes the fixture in the same
commit, so that the review sees the difference clients will see:

    .venv/bin/python manage.py spectacular --format openapi-json --file tests/api/fixtures/openapi_v1.json

Nothing is left out of the comparison: operationIds and tags are derived from the paths, component
names from the serializers, neither from the module a viewset lives in.
"""

import json
from pathlib import Path

import pytest
from django.core.management import call_command

PUBLISHED = Path(__file__).parent / "fixtures" / "openapi_v1.json"
METHODS = {"get", "put", "patch", "post", "delete", "head", "options", "trace"}


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> dict:
    target = tmp_path_factory.mktemp("schema") / "openapi.json"
    call_command("spectacular", "--format", "openapi-json", "--file", str(target))
    return json.loads(target.read_text())


@pytest.fixture(scope="module")
def published() -> dict:
    return json.loads(PUBLISHED.read_text())


def operations(schema: dict) -> set[tuple[str, str]]:
    return {(path, method) for path, item in schema["paths"].items() for method in item if method in METHODS}


def test_every_published_path_and_method_is_still_served(schema, published):
    assert len(operations(published)) >= 40  # the fixture is the whole API, not an excerpt
    assert sorted(operations(published) - operations(schema)) == []
    assert sorted(operations(schema) - operations(published)) == []


@pytest.mark.parametrize("section", ["paths", "components"])
def test_the_schema_is_the_published_one(schema, published, section):
    differing = sorted(
        name
        for name in schema[section].keys() | published[section].keys()
        if schema[section].get(name) != published[section].get(name)
    )
    assert differing == [], f"{section} that differ from {PUBLISHED.name} (see this module's docstring)"
    assert schema == published


def test_the_comparison_sees_a_changed_operation(schema, published):
    changed = json.loads(json.dumps(schema))
    changed["paths"]["/api/v1/studies/"]["get"]["parameters"].pop()
    assert changed != published and operations(changed) == operations(published)
