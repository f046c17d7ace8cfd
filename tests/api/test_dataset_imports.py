"""POST /api/v1/dataset-imports/: the public emphasis datasets uploaded as a .zip (the layouts of
tests/evaluation/dataset_layouts.py), with their permissions and refusals."""

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Annotation, Clip, Corpus, Participant, Study
from annotation.shared.jobs import JobFailed
from evaluation.models import LabelSet
from tests.api.callers import staff_with, token_client
from tests.evaluation.dataset_layouts import (
    emphassess_folder,
    emphassess_with_punctuation_marks,
    morrison_annotations,
    stresstest_parquet,
    tinystress_folder,
)

pytestmark = pytest.mark.django_db
URL = "/api/v1/dataset-imports/"
ADD_LABEL_SET = "evaluation.add_labelset"


def zipped(root: Path, name: str = "dataset.zip") -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return SimpleUploadedFile(name, buffer.getvalue(), content_type="application/zip")


def post(client, archive, **fields):
    return client.post(URL, {"archive": archive, **fields}, format="multipart")


def test_an_emphassess_upload_makes_a_final_set_with_its_provenance(tmp_path):
    emphassess_folder(tmp_path / "up")
    client = token_client(staff_with(ADD_LABEL_SET, "evaluation.view_labelset"))

    response = post(
        client, zipped(tmp_path / "up"), format="emphassess", name="EmphAssess", audio="audio", splits="test"
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["label_set"]["state"] == "final" and body["label_set"]["label_source"] == "prescribed"
    assert body["label_set"]["label_kind"] == "binary" and body["summary"]["clips"] == 4
    assert body["label_set"]["source"]["audio_folder"] == "uploaded archive dataset.zip, audio"
    listed = client.get("/api/v1/label-sets/", {"label_source": "prescribed"}).json()
    assert [entry["name"] for entry in listed["results"]] == ["EmphAssess"]


def test_a_tinystress_upload_reads_the_split_files(tmp_path):
    tinystress_folder(tmp_path / "up")
    client = token_client(staff_with(ADD_LABEL_SET))

    response = post(client, zipped(tmp_path / "up"), format="tinystress", name="TS", data="dataset", audio="audio")

    assert response.status_code == 201, response.json()
    assert response.json()["summary"]["counts"] == {"en": {"test": 2, "train": 4}}


def test_a_stresstest_upload_of_the_hubs_parquet_needs_no_audio_folder(tmp_path):
    stresstest_parquet(tmp_path / "up", paths=True)
    client = token_client(staff_with(ADD_LABEL_SET))

    response = post(client, zipped(tmp_path / "up"), format="stresstest", name="ST")

    assert response.status_code == 201, response.json()
    assert response.json()["summary"]["counts"] == {"en": {"test": 3}} and response.json()["skipped"] == []
    assert sorted(Clip.objects.values_list("source_path", flat=True)) == [f"stresstest_{n}.wav" for n in range(3)]


def test_skip_invalid_imports_the_rest_and_lists_each_record_left_out(tmp_path):
    emphassess_with_punctuation_marks(tmp_path / "up")
    client = token_client(staff_with(ADD_LABEL_SET))
    fields = {"format": "emphassess", "name": "EA", "audio": "audio", "splits": "test"}

    refused = post(client, zipped(tmp_path / "up"), **fields)
    assert refused.status_code == 400 and [p["where"] for p in refused.json()["problems"]] == [
        "gold_df.json line 2",
        "gold_df.json line 4",
    ]
    assert not LabelSet.objects.exists() and not Clip.objects.exists()

    response = post(client, zipped(tmp_path / "up"), skip_invalid=True, **fields)

    assert response.status_code == 201, response.json()
    assert response.json()["summary"]["clips"] == 3
    assert response.json()["skipped"] == [
        {
            "where": "gold_df.json line 2",
            "clip_id": "emph_001",
            "field": "gold_emphasis",
            "reason": "indices [3] mark punctuation, not a word",
        },
        {
            "where": "gold_df.json line 4",
            "clip_id": "emph_003",
            "field": "gold_emphasis",
            "reason": "indices [6] are outside the 6 tokens",
        },
    ]


def test_a_morrison_upload_needs_the_study_permission_too(tmp_path):
    morrison_annotations(tmp_path / "up")
    fields = {"format": "morrison", "name": "Morrison", "audio": "LibriTTS", "label_set": "Morrison"}

    refused = post(token_client(staff_with(ADD_LABEL_SET)), zipped(tmp_path / "up"), **fields)
    assert refused.status_code == 403 and not Study.objects.exists()

    response = post(token_client(staff_with(ADD_LABEL_SET, "annotation.add_study")), zipped(tmp_path / "up"), **fields)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["study"] == Study.objects.get(name="Morrison").pk
    assert body["label_set"]["label_source"] == "human_crowd" and body["label_set"]["label_kind"] == "binary"
    assert sorted(body["summary"]["rejected"]) == ["MORRISON-000003", "MORRISON-000004"]


def test_a_morrison_label_set_that_cannot_be_built_leaves_nothing(tmp_path, media_storage, monkeypatch):
    def fail(label_set, progress):
        raise JobFailed("forced: the annotator model could not be fitted")

    monkeypatch.setattr("evaluation.services.label_sets._build", fail)
    morrison_annotations(tmp_path / "up")
    client = token_client(staff_with(ADD_LABEL_SET, "annotation.add_study"))

    response = post(
        client, zipped(tmp_path / "up"), format="morrison", name="Morrison", audio="LibriTTS", label_set="Morrison"
    )

    assert response.status_code == 400 and "could not be built: forced" in response.json()["detail"]
    assert not Corpus.objects.exists() and not Clip.objects.exists() and not Study.objects.exists()
    assert not Participant.objects.exists() and not Annotation.objects.exists() and not LabelSet.objects.exists()
    assert not any(path.is_file() for path in media_storage.rglob("*"))


def test_without_the_permission_nothing_is_imported(tmp_path, client):
    emphassess_folder(tmp_path / "up")
    assert post(client, zipped(tmp_path / "up"), format="emphassess", name="x").status_code == 401
    staff = token_client(staff_with("evaluation.view_labelset"))
    assert post(staff, zipped(tmp_path / "up"), format="emphassess", name="x").status_code == 403
    assert not LabelSet.objects.exists() and not Clip.objects.exists()


def test_bad_records_are_a_400_naming_each_and_nothing_is_written(tmp_path):
    _, audio = emphassess_folder(tmp_path / "up")
    (audio / "emph_001.wav").unlink()
    client = token_client(staff_with(ADD_LABEL_SET))

    response = post(client, zipped(tmp_path / "up"), format="emphassess", name="x", audio="audio", splits="test")

    assert response.status_code == 400
    body = response.json()
    assert body["problems"] == [
        {
            "file": None,  # a dataset's record is not always a line of one file: `where` says where
            "line": None,
            "where": "gold_df.json line 2",
            "item": "emph_001",
            "field": "audio",
            "reason": body["problems"][0]["reason"],
        }
    ]
    assert body["problems"][0]["reason"].startswith("no audio file 'emph_001.wav' or 'emph_001.flac'")
    assert body["more_problems"] == 0 and "nothing was imported" in body["detail"]
    assert not LabelSet.objects.exists() and not Clip.objects.exists()


def test_paths_outside_the_archive_and_other_uploads_are_refused(tmp_path):
    emphassess_folder(tmp_path / "up")
    client = token_client(staff_with(ADD_LABEL_SET))
    response = post(client, zipped(tmp_path / "up"), format="emphassess", name="x", audio="../elsewhere")
    assert response.status_code == 400 and "escapes its folder" in response.json()["audio"][0]
    not_zip = SimpleUploadedFile("gold_df.json", b"{}")
    assert post(client, not_zip, format="emphassess", name="x").json()["archive"] == ["must be a .zip"]
