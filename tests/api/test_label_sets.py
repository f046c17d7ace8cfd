"""Label sets through the API: created with the first study's defaults, built, read row by row,
finalized, archived, and deleted only as drafts; refusals say why."""

import pytest

from evaluation.models import LabelSet
from tests.annotation.factories import StudyFactory
from tests.api.callers import staff_with, token_client
from tests.evaluation.builders import golden_study
from tests.evaluation.export_builders import final_label_set

pytestmark = pytest.mark.django_db
PERMS = (
    "evaluation.view_labelset",
    "evaluation.add_labelset",
    "evaluation.change_labelset",
    "evaluation.delete_labelset",
)


@pytest.fixture
def study():
    return golden_study()


@pytest.fixture
def api():
    return token_client(staff_with(*PERMS))


def create(api, capture, **body):
    with capture(execute=True):
        response = api.post("/api/v1/label-sets/", body, format="json")
    assert response.status_code == 202, response.content
    return api.get(response["Location"]).json()


def test_a_label_set_is_built_with_the_first_studys_defaults(api, study, django_capture_on_commit_callbacks):
    label_set = create(
        api,
        django_capture_on_commit_callbacks,
        name="golden",
        studies=[study.pk],
        parameters={"resamples": 0, "proportions": [0.6, 0.2, 0.2], "thresholds": {"min_kappa": None}},
    )

    assert label_set["status"] == "succeeded", label_set["error"]
    assert (label_set["state"], label_set["version"], label_set["studies"]) == ("draft", 1, [study.pk])
    parameters = label_set["parameters"]
    # Every usable annotation by default (issue 33), not a subsample to the target.
    assert parameters["subsample"] is None and parameters["proportions"] == [0.6, 0.2, 0.2]
    assert parameters["thresholds"]["min_kappa"] is None
    assert parameters["thresholds"]["min_attention"] == study.review_min_attention
    assert label_set["summary"]["clips"] == 12


def test_rows_come_in_order_in_pages_and_filter_by_split(api, study, django_capture_on_commit_callbacks):
    label_set = final_label_set(study, django_capture_on_commit_callbacks, subsample=6)
    rows_url = f"/api/v1/label-sets/{label_set.pk}/rows/"

    first = api.get(rows_url, {"page_size": 4}).json()
    train = api.get(rows_url, {"split": "train", "page_size": 500}).json()["results"]

    assert first["count"] == 10 and [row["position"] for row in first["results"]] == [0, 1, 2, 3]
    row = first["results"][0]
    assert row["study"] == "golden" and len(row["annotators"]) == 6
    assert set(row["words"][0]) == {"index", "text", "start", "end", "binary", "scalar", "levels"}
    assert train and {row["split"] for row in train} == {"train"}


def test_finalize_then_archive(api, study, django_capture_on_commit_callbacks):
    label_set = create(
        api, django_capture_on_commit_callbacks, name="golden", studies=[study.pk], parameters={"resamples": 0}
    )

    final = api.post(f"/api/v1/label-sets/{label_set['id']}/finalize/")
    archived = api.post(f"/api/v1/label-sets/{label_set['id']}/archive/")

    assert final.status_code == 200 and final.json()["state"] == "final" and final.json()["checksum"]
    assert archived.status_code == 200 and archived.json()["state"] == "archived"


def test_refusals_say_why(api, study, django_capture_on_commit_callbacks):
    queued = api.post("/api/v1/label-sets/", {"name": "golden", "studies": [study.pk]}, format="json").json()
    final = final_label_set(study, django_capture_on_commit_callbacks, name="frozen")

    not_built = api.post(f"/api/v1/label-sets/{queued['id']}/finalize/")
    not_final = api.post(f"/api/v1/label-sets/{queued['id']}/archive/")
    kept = api.delete(f"/api/v1/label-sets/{final.pk}/")

    assert not_built.status_code == not_final.status_code == kept.status_code == 400
    assert not_built.json() == {"detail": "golden v1 is not built yet (queued); it can be finalized once built"}
    assert not_final.json() == {"detail": "only a final label set can be archived; golden v1 is draft"}
    assert kept.json() == {"detail": "frozen v1 is final: archive it instead of deleting it"}
    assert LabelSet.objects.filter(pk=final.pk).exists()


def test_a_built_draft_can_be_deleted(api, study, django_capture_on_commit_callbacks):
    label_set = create(
        api, django_capture_on_commit_callbacks, name="golden", studies=[study.pk], parameters={"resamples": 0}
    )

    assert api.delete(f"/api/v1/label-sets/{label_set['id']}/").status_code == 204
    assert not LabelSet.objects.exists()


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"studies": []}, {"name": ["This field is required."], "studies": ["This list may not be empty."]}),
        ({"name": "x", "studies": [999999]}, {"studies": ['Invalid pk "999999" - object does not exist.']}),
        (
            {"name": "x", "studies": ["{study}"], "parameters": {"proportions": [0.5, 0.5]}},
            {"parameters": {"proportions": ["Ensure this field has at least 3 elements."]}},
        ),
        (
            {"name": "x", "studies": ["{study}"], "parameters": {"proportions": [0.5, 0.5, 0.5]}},
            {"parameters": ["proportions must be three non-negative shares (train, validation, test) adding up to 1"]},
        ),
        (
            {"name": "x", "studies": ["{study}"], "parameters": {"subsample": 0}},
            {"parameters": {"subsample": ["Ensure this value is greater than or equal to 1."]}},
        ),
    ],
)
def test_bad_requests_name_their_field(api, study, body, errors):
    body = {key: [study.pk] if value == ["{study}"] else value for key, value in body.items()}

    response = api.post("/api/v1/label-sets/", body, format="json")

    assert response.status_code == 400
    assert response.json() == errors


def test_only_emphasis_studies_make_label_sets(api):
    form = StudyFactory(kind="form", slug="voices")

    response = api.post("/api/v1/label-sets/", {"name": "x", "studies": [form.pk]}, format="json")

    assert response.status_code == 400
    assert response.json() == {"detail": "label sets are made from emphasis studies; not: voices"}
