"""/api/v1/systems/ and /api/v1/cast-sets/: reading systems and their outputs, and the uploads,
which run the import commands' service with the same refusals, as 400 JSON naming line and field."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from evaluation.models import CastItem, CastRendition, System, SystemOutput
from tests.api.callers import staff_with, token_client
from tests.evaluation.suites.fixtures import (
    import_stance_study,
    import_stresstest_study,
    stance_outputs,
    stresstest_outputs,
    write_cast_items,
    write_cast_renditions,
    write_jsonl,
    zip_folder,
)

pytestmark = pytest.mark.django_db

ADD = "evaluation.add_systemoutput"


@pytest.fixture
def study(tmp_path):
    return import_stresstest_study(tmp_path / "stresstest")


def upload(path, name=None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name or path.name, path.read_bytes())


def post_outputs(client, path, **fields):
    return client.post("/api/v1/systems/upload/", {"file": upload(path), **fields}, format="multipart")


def test_uploading_stresstest_answers_imports_them(study, tmp_path):
    client = token_client(staff_with(ADD))
    path = write_jsonl(tmp_path / "m1.jsonl", stresstest_outputs())

    response = post_outputs(client, path, suite="stresstest", system="m1", version="7", study=study.pk)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["system"], body["outputs"], body["items"], body["studies"], body["file"]) == (
        "m1",
        6,
        6,
        [study.slug],
        "m1.jsonl",
    )
    assert SystemOutput.objects.filter(system__name="m1").count() == 6


def test_a_bad_line_is_400_naming_line_item_and_field_and_writes_nothing(study, tmp_path):
    client = token_client(staff_with(ADD))
    rows = [{"item": "st-001", "answer": 1}, {"item": "st-404", "answer": 1}, {"item": "st-001-ssd", "stressed": [9]}]
    response = post_outputs(client, write_jsonl(tmp_path / "m1.jsonl", rows), suite="stresstest", system="m1")

    assert response.status_code == 400
    body = response.json()
    assert body["detail"].startswith("m1.jsonl: 2 bad row(s), nothing was imported")
    assert body["problems"] == [
        {
            "file": "m1.jsonl",
            "line": 2,
            "where": "m1.jsonl line 2",
            "item": "st-404",
            "field": "item",
            "reason": "unknown item 'st-404': no listening-form item has this id",
        },
        {
            "file": "m1.jsonl",
            "line": 3,
            "where": "m1.jsonl line 3",
            "item": "st-001-ssd",
            "field": "stressed",
            "reason": "word indices [9] are out of range: the item has 7 words, 0 to 6",
        },
    ]
    assert body["more_problems"] == 0
    assert not System.objects.exists()


def test_outputs_already_there_are_400_until_replace(study, tmp_path):
    client = token_client(staff_with(ADD))
    path = write_jsonl(tmp_path / "m1.jsonl", stresstest_outputs())
    assert post_outputs(client, path, suite="stresstest", system="m1").status_code == 201

    again = post_outputs(client, path, suite="stresstest", system="m1")
    assert again.status_code == 400 and "replace" in again.json()["detail"]
    replaced = post_outputs(client, path, suite="stresstest", system="m1", replace="true")
    assert replaced.status_code == 201 and replaced.json()["replaced"] == 6


def test_form_fields_are_checked(study, tmp_path):
    client = token_client(staff_with(ADD))
    path = write_jsonl(tmp_path / "m1.jsonl", stresstest_outputs())

    response = post_outputs(client, path, suite="mmlu", system="m1", kind="oracle")
    assert response.status_code == 400
    assert set(response.json()) == {"suite", "kind"}
    assert post_outputs(client, path, suite="stresstest", system="m1", study=99999).status_code == 400


def test_uploading_stance_answers_with_the_judges_metadata(tmp_path):
    stance = import_stance_study(tmp_path / "stance")
    client = token_client(staff_with(ADD))
    path = write_jsonl(tmp_path / "judge.jsonl", stance_outputs())

    response = post_outputs(
        client,
        path,
        suite="stance",
        system="judge",
        study=stance.pk,
        metadata='{"prompt": "rate warmth", "temperature": 0}',
    )

    assert response.status_code == 201, response.json()
    assert (response.json()["outputs"], response.json()["items"]) == (8, 4)
    judge = System.objects.get(name="judge")
    assert (judge.kind, judge.metadata) == ("judge", {"prompt": "rate warmth", "temperature": 0})
    assert set(SystemOutput.objects.values_list("pole_order", flat=True)) == {"NP", "PN"}


def test_metadata_that_is_not_a_json_object_is_400_naming_the_field(study, tmp_path):
    client = token_client(staff_with(ADD))
    path = write_jsonl(tmp_path / "m1.jsonl", stresstest_outputs())

    response = post_outputs(client, path, suite="stresstest", system="m1", metadata='"just text"')

    assert response.status_code == 400
    assert response.json() == {"metadata": ["the system metadata must be a JSON object, not str"]}
    assert not System.objects.exists()


def test_cast_items_then_a_zip_of_renditions(tmp_path):
    client = token_client(staff_with(ADD, "evaluation.add_castitem", "evaluation.view_castset"))
    items = client.post(
        "/api/v1/cast-sets/upload/",
        {"file": upload(write_cast_items(tmp_path / "items.jsonl")), "set": "cast v1"},
        format="multipart",
    )
    assert items.status_code == 201 and items.json()["created"] == 3
    set_id = items.json()["set_id"]

    archive = zip_folder(write_cast_renditions(tmp_path / "tts", items=("c01", "c02")), tmp_path / "tts.zip")
    response = post_outputs(client, archive, suite="cast", system="tts-a", cast_set=set_id)
    assert response.status_code == 201, response.json()
    assert (response.json()["renditions"], response.json()["corpus"]) == (4, "cast v1 renditions")
    assert CastRendition.objects.count() == 4

    listed = client.get(f"/api/v1/cast-sets/{set_id}/").json()
    assert (listed["name"], listed["items"], listed["corpus"]) == ("cast v1", 3, "cast v1 renditions")


def test_a_bad_cast_items_file_is_400(tmp_path):
    client = token_client(staff_with("evaluation.add_castitem"))
    path = write_jsonl(
        tmp_path / "items.jsonl",
        [{"id": "c1", "sentence": "a b", "context_a": "x", "context_b": "y", "word_a": 0, "word_b": 0}],
    )
    response = client.post("/api/v1/cast-sets/upload/", {"file": upload(path), "set": "s"}, format="multipart")

    assert response.status_code == 400
    assert response.json()["problems"][0]["line"] == 1 and response.json()["problems"][0]["field"] == "word_b"
    assert not CastItem.objects.exists()


def test_systems_and_their_outputs_are_read_with_the_view_permissions(study, tmp_path):
    post_outputs(
        token_client(staff_with(ADD)),
        write_jsonl(tmp_path / "m.jsonl", stresstest_outputs()),
        suite="stresstest",
        system="m1",
    )
    system = System.objects.get()
    reader = token_client(staff_with("evaluation.view_system", "evaluation.view_systemoutput"))

    listed = reader.get("/api/v1/systems/").json()["results"]
    assert [(s["name"], s["kind"], s["outputs"], s["renditions"]) for s in listed] == [("m1", "model", 6, 0)]
    outputs = reader.get(f"/api/v1/systems/{system.pk}/outputs/?suite=stresstest").json()["results"]
    assert [(o["item"], o["raw"], o["line"], o["study"]) for o in outputs[:2]] == [
        ("st-001", 0, 1, study.slug),
        ("st-001-ssd", [0], 2, study.slug),
    ]
    assert reader.get("/api/v1/systems/99999/outputs/").status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "perm"),
    [
        ("get", "/api/v1/systems/", "evaluation.view_system"),
        ("get", "/api/v1/systems/1/outputs/", "evaluation.view_systemoutput"),
        ("post", "/api/v1/systems/upload/", ADD),
        ("get", "/api/v1/cast-sets/", "evaluation.view_castset"),
        ("post", "/api/v1/cast-sets/upload/", "evaluation.add_castitem"),
    ],
)
def test_each_endpoint_needs_its_permission(method, path, perm):
    assert getattr(APIClient(), method)(path).status_code == 401
    others = {
        "evaluation.view_system",
        "evaluation.view_systemoutput",
        ADD,
        "evaluation.view_castset",
        "evaluation.add_castitem",
    } - {perm}
    assert getattr(token_client(staff_with(*others)), method)(path).status_code == 403
    assert getattr(token_client(staff_with(perm)), method)(path).status_code in (200, 400, 404)
