"""Dataset exports through the API: asked for, polled, downloaded through a short-lived link;
refusals say why, and an export holds nothing its caller may not read."""

import io
import zipfile

import pytest

from evaluation.models import DatasetExport
from tests.api.callers import staff_with, token_client
from tests.evaluation.builders import golden_study
from tests.evaluation.export_builders import final_label_set

pytestmark = pytest.mark.django_db
PERMS = (
    "evaluation.add_datasetexport",
    "evaluation.view_datasetexport",
    "evaluation.view_labelset",
    "annotation.view_annotation",
)


@pytest.fixture
def study():
    return golden_study()


@pytest.fixture
def api():
    return token_client(staff_with(*PERMS))


def ask(api, capture, **body):
    with capture(execute=True):
        response = api.post("/api/v1/dataset-exports/", body, format="json")
    assert response.status_code == 202, response.content
    return api.get(response["Location"]).json()


def download(client, link: dict) -> zipfile.ZipFile:
    response = client.get(link["url"].removeprefix("http://testserver"))
    assert response.status_code == 200
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def test_a_label_set_export_is_downloaded_through_its_link(api, study, client, django_capture_on_commit_callbacks):
    label_set = final_label_set(study, django_capture_on_commit_callbacks)

    export = ask(api, django_capture_on_commit_callbacks, format="csv", label_set=label_set.pk)
    link = api.get(export["link_url"]).json()

    assert export["status"] == "succeeded", export["error"]
    assert export["file_name"] == "golden-labels-v1-csv.zip" and len(export["sha256"]) == 64
    assert link["expires_in"] > 0
    assert "words.csv" in download(client, link).namelist()  # the link itself needs no sign-in


def test_a_raw_export_keeps_annotators_opaque(api, study, client, django_capture_on_commit_callbacks):
    export = ask(api, django_capture_on_commit_callbacks, format="raw", study=study.pk)

    archive = download(client, api.get(export["link_url"]).json())

    assert export["status"] == "succeeded", export["error"]
    pids = study.participants.values_list("prolific_pid", flat=True)
    contents = b"".join(archive.read(name) for name in archive.namelist()).decode()
    assert not any(pid in contents for pid in pids)


def test_prolific_ids_need_the_review_permission(api, study):
    response = api.post("/api/v1/dataset-exports/", {"format": "raw", "study": study.pk, "include_prolific_ids": True})

    assert response.status_code == 403
    assert not DatasetExport.objects.exists()


def test_refusals_say_why(api, study):
    response = api.post("/api/v1/dataset-exports/", {"format": "raw"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"detail": "a raw export is of one study's annotations: give a study and no label set"}


def test_a_draft_label_set_is_not_exported(api, study, django_capture_on_commit_callbacks):
    label_set = final_label_set(study, django_capture_on_commit_callbacks)
    label_set.lifecycle = "draft"
    label_set.save(update_fields=["lifecycle"])

    response = api.post("/api/v1/dataset-exports/", {"format": "jsonl", "label_set": label_set.pk}, format="json")

    assert response.status_code == 400
    assert "only a final (or archived) label set is exported" in response.json()["detail"]


def test_no_link_before_the_export_is_built(api, study):
    export = api.post("/api/v1/dataset-exports/", {"format": "raw", "study": study.pk}, format="json").json()

    response = api.get(export["link_url"])

    assert export["status"] == "queued"
    # As every download answers it: 409, and when to ask again (issue 19: one "not ready" answer).
    assert response.status_code == 409 and response["Retry-After"] == "5"
    assert response.json() == {
        "detail": f"Export {export['id']}: not ready yet (waiting for a worker); try again in a moment"
    }


def test_an_unknown_format_names_the_field(api):
    response = api.post("/api/v1/dataset-exports/", {"format": "xlsx"}, format="json")

    assert response.json() == {"format": ['"xlsx" is not a valid choice.']}
