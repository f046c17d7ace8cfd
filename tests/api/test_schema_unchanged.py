"""The published API stays what clients were given: the schema generated from the code is the one
in tests/api/fixtures/openapi_v1.json, the schema of /api/v1/ when the API was split into one
package per app (annotation/api, evaluation/api, modelzoo/api).

A deliberate change of the API (a new endpoint, field or parameter) changes the fixture in the same
commit, so that the review sees the difference clients will see:

    .venv/bin/python manage.py spectacular --format openapi-json --file tests/api/fixtures/openapi_v1.json

operationIds and tags are compared too: they are derived from the paths, component names from the
serializers, neither from the module a viewset lives in. Left out: the upper bound (and int64
format) of a model's integer field, which DRF takes from the database backend (SQLite's 64-bit
range against PostgreSQL's smallint and integer), so that the comparison holds on both.
"""

import json
from pathlib import Path

import pytest
from django.core.management import call_command

PUBLISHED = Path(__file__).parent / "fixtures" / "openapi_v1.json"
METHODS = {"get", "put", "patch", "post", "delete", "head", "options", "trace"}
BACKEND_BOUNDS = {32767, 2147483647, 9223372036854775807}  # smallint, integer, bigint (SQLite's every integer)


def without_backend_bounds(node):
    """The schema without the integer bounds that depend on the database backend."""
    if isinstance(node, list):
        return [without_backend_bounds(item) for item in node]
    if not isinstance(node, dict):
        return node
    dropped = set()
    if node.get("type") == "integer":
        dropped = {"maximum"} if node.get("maximum") in BACKEND_BOUNDS else set()
        dropped |= {"format"} if node.get("format") == "int64" else set()
    return {key: without_backend_bounds(value) for key, value in node.items() if key not in dropped}


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> dict:
    target = tmp_path_factory.mktemp("schema") / "openapi.json"
    call_command("spectacular", "--format", "openapi-json", "--file", str(target))
    return without_backend_bounds(json.loads(target.read_text()))


@pytest.fixture(scope="module")
def published() -> dict:
    return without_backend_bounds(json.loads(PUBLISHED.read_text()))


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


def test_only_the_backend_bounds_are_left_out():
    field = {"type": "integer", "maximum": 2147483647, "minimum": 0, "format": "int64"}
    assert without_backend_bounds({"a": [field]}) == {"a": [{"type": "integer", "minimum": 0}]}
    chosen = {"type": "integer", "maximum": 500, "minimum": 1}  # a bound a serializer sets is compared
    assert without_backend_bounds(chosen) == chosen
