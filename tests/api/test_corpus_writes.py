"""Corpus imports through the API: a .zip or a folder on the configured storage, queued as the
admin's upload is, polled as a job, refused with the importer's file, line and field; and a
corpus's clips and words."""

import io
import shutil
import zipfile

import pytest

from annotation.models import Clip, Corpus, ImportJob
from tests.annotation.factories import ClipFactory, CorpusFactory
from tests.api.callers import staff_with, token_client

pytestmark = pytest.mark.django_db

IMPORTS = ("annotation.add_importjob", "annotation.view_importjob")


def zipped(folder) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    buffer.seek(0)
    buffer.name = "voices.zip"
    return buffer


@pytest.fixture
def api():
    return token_client(staff_with(*IMPORTS))


def test_a_zip_is_imported_as_a_job_with_its_progress(api, corpus_folder, django_capture_on_commit_callbacks):
    corpus_folder.add("a1", "she never said that")
    corpus_folder.add("a2", "we met at noon")
    corpus_folder.write_jsonl()

    with django_capture_on_commit_callbacks(execute=True):
        reply = api.post(
            "/api/v1/import-jobs/", {"corpus_name": "voices", "archive": zipped(corpus_folder.root)}, format="multipart"
        )

    assert reply.status_code == 202, reply.json()
    job = api.get(reply["Location"]).json()
    assert job["status"] == "succeeded", job["error"]
    assert job["summary"]["created"] == 2 and job["problems"] == []
    assert job["corpus"] == Corpus.objects.get(name="voices").pk and job["done"] == job["total"]


def test_a_bad_row_fails_the_job_naming_file_line_and_field(api, corpus_folder, django_capture_on_commit_callbacks):
    corpus_folder.add("a1")
    corpus_folder.add("a2", write=False)  # its audio is missing
    corpus_folder.write_jsonl()

    with django_capture_on_commit_callbacks(execute=True):
        reply = api.post(
            "/api/v1/import-jobs/", {"corpus_name": "voices", "archive": zipped(corpus_folder.root)}, format="multipart"
        )

    job = api.get(reply["Location"]).json()
    assert job["status"] == "failed" and "nothing was imported" in job["error"]
    [problem] = job["problems"]
    assert (problem["file"], problem["line"], problem["clip_id"], problem["field"]) == (
        "manifest.jsonl",
        2,
        "a2",
        "audio",
    )
    assert not Clip.objects.exists()


def test_a_folder_on_the_storage_is_imported_as_an_upload_is(
    api, corpus_folder, media_storage, django_capture_on_commit_callbacks
):
    corpus_folder.add("a1")
    corpus_folder.write_jsonl()
    shutil.copytree(corpus_folder.root, media_storage / "incoming" / "voices")

    with django_capture_on_commit_callbacks(execute=True):
        reply = api.post("/api/v1/import-jobs/", {"corpus_name": "voices", "folder": "incoming/voices"})

    assert reply.status_code == 202, reply.json()
    assert api.get(reply["Location"]).json()["status"] == "succeeded"
    assert Clip.objects.filter(corpus__name="voices", external_id="a1").exists()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"folder": "../elsewhere"}, "escapes its folder"),
        ({"folder": "nowhere"}, "no files there"),
        ({}, "either an archive or a storage folder"),
    ],
)
def test_a_refused_upload_is_400_and_queues_nothing(api, fields, message):
    reply = api.post("/api/v1/import-jobs/", {"corpus_name": "voices", **fields})

    assert reply.status_code == 400
    assert message in str(reply.json())
    assert not ImportJob.objects.exists()


def test_a_file_that_is_not_a_zip_is_refused_by_name(api):
    upload = io.BytesIO(b"not a zip")
    upload.name = "voices.txt"

    reply = api.post("/api/v1/import-jobs/", {"corpus_name": "voices", "archive": upload}, format="multipart")

    assert reply.status_code == 400 and reply.json() == {"archive": ["voices.txt: not a .zip archive"]}


def test_an_import_needs_its_permission():
    reply = token_client(staff_with("annotation.view_importjob")).post("/api/v1/import-jobs/", {"corpus_name": "x"})

    assert reply.status_code == 403


def test_a_corpus_lists_its_clips_and_words():
    corpus = CorpusFactory(name="voices")
    ClipFactory(corpus=corpus, external_id="a1", transcript="one two")
    ClipFactory(external_id="elsewhere")  # another corpus
    api = token_client(staff_with("annotation.view_clip"))

    clips = api.get(f"/api/v1/corpora/{corpus.pk}/clips/").json()["results"]
    words = api.get(f"/api/v1/corpora/{corpus.pk}/words/").json()["results"]

    assert [(clip["clip_id"], [w["text"] for w in clip["words"]]) for clip in clips] == [("a1", ["one", "two"])]
    assert [(w["clip_id"], w["index"], w["text"]) for w in words] == [("a1", 0, "one"), ("a1", 1, "two")]
    assert api.get("/api/v1/corpora/9999/words/").status_code == 404
