"""Idempotency-Key: a retried create answers the first response (status and body) and makes no
second object; the same key with another body is 422; a refusal stores nothing, the key included;
two retries at the same moment make one object (PostgreSQL)."""

import io
import json
import threading
import time
import urllib.request
import zipfile
from urllib.error import HTTPError

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from annotation.api import study_writes
from annotation.models import ApiIdempotencyKey, ImportJob, Study
from tests.annotation.factories import ClipFactory, CorpusFactory
from tests.api.callers import staff_with, token_client

WRITES = ("annotation.add_study", "annotation.view_study", "annotation.add_importjob")


@pytest.fixture
def corpus(db):
    corpus = CorpusFactory(name="voices")
    ClipFactory.create_batch(3, corpus=corpus)
    return corpus


def create(api, corpus, key: str, **fields):
    body = {"name": "Stress study", "corpus": corpus.pk, **fields}
    return api.post("/api/v1/studies/", body, format="json", HTTP_IDEMPOTENCY_KEY=key)


@pytest.mark.django_db
def test_a_retry_answers_the_first_response_and_creates_nothing(corpus):
    api = token_client(staff_with(*WRITES))

    first = create(api, corpus, "key-1")
    again = create(api, corpus, "key-1")

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert Study.objects.count() == 1


@pytest.mark.django_db
def test_the_same_key_with_another_body_is_422(corpus):
    api = token_client(staff_with(*WRITES))
    create(api, corpus, "key-1")

    reply = create(api, corpus, "key-1", clips_per_task=3)

    assert reply.status_code == 422 and "another body" in reply.json()["detail"]
    assert Study.objects.count() == 1


@pytest.mark.django_db
def test_a_refusal_keeps_no_key_so_the_corrected_request_goes_through(corpus):
    api = token_client(staff_with(*WRITES))

    refused = create(api, corpus, "key-1", selection={"clip_ids": ["typo"]})
    corrected = create(api, corpus, "key-1")

    assert refused.status_code == 400 and corrected.status_code == 201
    assert Study.objects.count() == 1 and ApiIdempotencyKey.objects.count() == 1


@pytest.mark.django_db
def test_keys_belong_to_their_user(corpus):
    create(token_client(staff_with(*WRITES)), corpus, "key-1")

    reply = create(token_client(staff_with(*WRITES)), corpus, "key-1", name="Another study")

    assert reply.status_code == 201 and Study.objects.count() == 2


@pytest.mark.django_db
def test_an_upload_is_hashed_by_its_content(corpus, django_capture_on_commit_callbacks):
    api = token_client(staff_with(*WRITES))

    def zipped(content: bytes) -> bytes:
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as bundle:
            bundle.writestr(zipfile.ZipInfo("manifest.jsonl", date_time=(2025, 1, 1, 0, 0, 0)), content)
        return archive.getvalue()

    def upload(archive: bytes):
        data = {"corpus_name": "voices", "archive": io.BytesIO(archive)}
        data["archive"].name = "voices.zip"
        return api.post("/api/v1/import-jobs/", data, format="multipart", HTTP_IDEMPOTENCY_KEY="upload-1")

    first, again, other = upload(zipped(b"{}\n")), upload(zipped(b"{}\n")), upload(zipped(b"[]\n"))

    assert first.status_code == again.status_code == 202 and again.json() == first.json()
    assert other.status_code == 422 and ImportJob.objects.count() == 1


@pytest.mark.django_db
def test_a_key_too_long_is_refused(corpus):
    reply = create(token_client(staff_with(*WRITES)), corpus, "k" * 256)

    assert reply.status_code == 400 and "Idempotency-Key" in reply.json()


def post(url: str, token: str, body: dict, key: str) -> tuple[int, dict]:
    request = urllib.request.Request(url, method="POST", data=json.dumps(body).encode())
    request.add_header("Authorization", f"Token {token}")
    request.add_header("Content-Type", "application/json")
    request.add_header("Idempotency-Key", key)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_retries_at_once_make_one_study(live_server, corpus, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("two requests in two transactions at once are tested on PostgreSQL")
    token = Token.objects.create(user=staff_with(*WRITES)).key
    created = study_writes.study_create

    def slow_create(**kwargs):  # the first request holds its transaction open while the second arrives
        study = created(**kwargs)
        time.sleep(0.5)
        return study

    monkeypatch.setattr(study_writes, "study_create", slow_create)
    body, replies, start = {"name": "Stress study", "corpus": corpus.pk}, [], threading.Barrier(2)

    def retry():
        start.wait()
        replies.append(post(f"{live_server.url}/api/v1/studies/", token, body, "same-key"))

    threads = [threading.Thread(target=retry) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert [status for status, _ in replies] == [201, 201], replies
    assert replies[0][1] == replies[1][1]
    assert Study.objects.count() == 1 and ApiIdempotencyKey.objects.count() == 1


@pytest.mark.django_db
def test_the_creates_of_the_other_apps_honour_the_key_too(django_capture_on_commit_callbacks):
    from evaluation.models import LabelSet
    from tests.evaluation.builders import golden_study

    api = token_client(staff_with("evaluation.add_labelset", "evaluation.view_labelset"))
    body = {"name": "labels", "studies": [golden_study().pk], "parameters": {"resamples": 0}}

    first = api.post("/api/v1/label-sets/", body, format="json", HTTP_IDEMPOTENCY_KEY="set-1")
    again = api.post("/api/v1/label-sets/", body, format="json", HTTP_IDEMPOTENCY_KEY="set-1")

    assert first.status_code == again.status_code == 202
    assert again.json() == first.json() and again["Location"] == first["Location"]
    assert LabelSet.objects.count() == 1
