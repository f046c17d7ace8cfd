"""Media on S3: imports, presigned audio links and clean-up against a real S3 API.

A moto_server subprocess (one per test session) stands in for S3; every test
gets its own bucket and points STORAGES at it with exactly what
config.env.storages() builds for STORAGE_BACKEND=s3. Nothing in boto3 or
django-storages is patched: every call goes over HTTP to the server.
"""

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
import zipfile
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import boto3
import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from django.urls import reverse
from storages.backends.s3 import S3Storage

from annotation.audio_links import signed_audio_url
from annotation.models import Clip, Corpus, ImportJob, Word
from config import env

pytestmark = [pytest.mark.s3, pytest.mark.django_db]

REGION = "us-east-1"
ACCESS_KEY = "testing-access-key"
SECRET_KEY = "testing-secret-key"
S3_BACKEND = "storages.backends.s3.S3Storage"

# Straight to 127.0.0.1, whatever HTTP(S)_PROXY says.
_http = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def fetch(url: str, headers: dict | None = None) -> tuple[int, Message, bytes]:
    """GET url; return (status, headers, body), also for 4xx answers."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with _http.open(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers, error.read()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _moto_command() -> list[str]:
    script = Path(sys.executable).with_name("moto_server")
    if script.exists():
        return [str(script)]
    try:
        import moto.server  # noqa: F401
    except ImportError:
        message = "moto[server] is not installed (`make test` installs the test extra)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return [sys.executable, "-m", "moto.server"]


@pytest.fixture(scope="session")
def moto_endpoint(tmp_path_factory):
    """URL of a moto_server subprocess that lives for the whole test session."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path_factory.mktemp("moto") / "moto_server.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [*_moto_command(), "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if server.poll() is not None:
                pytest.fail(f"moto_server exited with {server.returncode}:\n{log_path.read_text()}")
            try:
                fetch(f"{url}/moto-api/data.json")
                break
            except OSError:  # not listening yet
                if time.monotonic() > deadline:
                    pytest.fail(f"moto_server did not answer on {url} within 30 s:\n{log_path.read_text()}")
                time.sleep(0.05)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@dataclass
class Bucket:
    name: str
    endpoint: str
    client: object

    def keys(self) -> list[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.name)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def read(self, key: str) -> bytes:
        return self.client.get_object(Bucket=self.name, Key=key)["Body"].read()

    def content_type(self, key: str) -> str:
        return self.client.head_object(Bucket=self.name, Key=key)["ContentType"]


@pytest.fixture
def s3_bucket(moto_endpoint, settings, media_storage, tmp_path):
    """A fresh private bucket, and default storage pointed at it as settings.py would."""
    name = f"media-{uuid.uuid4().hex[:16]}"
    client = boto3.client(
        "s3",
        endpoint_url=moto_endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )
    client.create_bucket(Bucket=name)
    environ = {
        "STORAGE_BACKEND": "s3",
        "AWS_STORAGE_BUCKET_NAME": name,
        "AWS_S3_REGION_NAME": REGION,
        "AWS_S3_ENDPOINT_URL": moto_endpoint,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    }
    settings.STORAGES = env.storages(environ, tmp_path / "unused-media")
    assert settings.STORAGES["default"]["BACKEND"] == S3_BACKEND
    assert isinstance(default_storage, S3Storage)
    bucket = Bucket(name, moto_endpoint, client)
    yield bucket
    keys = bucket.keys()
    if keys:
        client.delete_objects(Bucket=name, Delete={"Objects": [{"Key": key} for key in keys]})
    client.delete_bucket(Bucket=name)


def run_import(path, *args):
    call_command("import_corpus", str(path), "--no-progress", *args)


STORED_NAME = re.compile(r"audio/[0-9a-f]{32}/(original\.(wav|flac)|model\.wav|browser\.mp3)")


def test_import_stores_original_model_and_browser_audio_as_bucket_objects(corpus_folder, s3_bucket, media_storage):
    corpus_folder.add("c1", speaker="s1")
    corpus_folder.add("c2", "a second clip", suffix=".flac")
    corpus_folder.write_jsonl()

    run_import(corpus_folder.root, "--corpus", "on-s3")

    clips = list(Clip.objects.order_by("external_id"))
    assert [(clip.corpus.name, clip.external_id) for clip in clips] == [("on-s3", "c1"), ("on-s3", "c2")]
    assert Word.objects.count() == 9
    names = [getattr(clip, f).name for clip in clips for f in ("original_audio", "model_audio", "browser_audio")]
    assert all(STORED_NAME.fullmatch(name) for name in names), names
    assert s3_bucket.keys() == sorted(names)
    c1, c2 = clips
    assert s3_bucket.read(c1.original_audio.name) == (corpus_folder.root / "audio/c1.wav").read_bytes()
    assert s3_bucket.read(c2.original_audio.name) == (corpus_folder.root / "audio/c2.flac").read_bytes()
    assert s3_bucket.read(c1.model_audio.name)[:4] == b"RIFF"
    assert s3_bucket.read(c1.browser_audio.name)[:3] == b"ID3"
    # Browsers play straight from the bucket, so the type must be right there.
    assert s3_bucket.content_type(c1.browser_audio.name) == "audio/mpeg"
    assert s3_bucket.content_type(c1.model_audio.name) in {"audio/x-wav", "audio/wav"}
    # Read back through Django's storage too, as the app does.
    with c1.model_audio.open("rb") as handle:
        assert handle.read(4) == b"RIFF"
    # Nothing went to the local media folder.
    assert not media_storage.exists() or not any(media_storage.rglob("*"))


def presigned_query(url: str) -> dict:
    """The query of a SigV4 presigned URL (SigV2 would be refused by newer regions
    and most S3-compatible servers; config.env.storages() asks for s3v4)."""
    query = dict(parse_qsl(urlsplit(url).query))
    assert query["X-Amz-Algorithm"] == "AWS4-HMAC-SHA256"
    assert query["X-Amz-Credential"].startswith(f"{ACCESS_KEY}/") and f"/{REGION}/s3/" in query["X-Amz-Credential"]
    assert query["X-Amz-Signature"]
    assert "Signature" not in query and "AWSAccessKeyId" not in query
    return query


def test_signed_audio_url_is_presigned_serves_ranges_and_needs_its_signature(corpus_folder, s3_bucket, settings):
    corpus_folder.add("c1", seconds=2.0)
    corpus_folder.write_jsonl()
    run_import(corpus_folder.root)
    name = Clip.objects.get().browser_audio.name
    whole = s3_bucket.read(name)
    assert len(whole) > 100

    url = signed_audio_url(name)

    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == s3_bucket.endpoint
    assert parts.path == f"/{s3_bucket.name}/{name}"
    assert presigned_query(url)["X-Amz-Expires"] == str(settings.AUDIO_URL_TTL_SECONDS)
    assert presigned_query(signed_audio_url(name, ttl_seconds=60))["X-Amz-Expires"] == "60"

    status, headers, body = fetch(url, {"Range": "bytes=0-99"})
    assert status == 206
    assert body == whole[:100]
    assert headers["Content-Range"] == f"bytes 0-99/{len(whole)}"
    status, _, body = fetch(url)
    assert (status, body) == (200, whole)

    # The objects are private: without its signature the same URL is refused.
    unsigned = [(key, value) for key, value in parse_qsl(parts.query) if key != "X-Amz-Signature"]
    status, _, body = fetch(urlunsplit(parts._replace(query=urlencode(unsigned))), {"Range": "bytes=0-99"})
    assert status == 403 and whole[:100] not in body
    status, _, _ = fetch(urlunsplit(parts._replace(query="")))
    assert status == 403


def test_a_refused_import_leaves_the_bucket_empty(corpus_folder, s3_bucket):
    corpus_folder.add("good")
    corpus_folder.add("missing", write=False)
    corpus_folder.write_jsonl()

    with pytest.raises(CommandError) as refused:
        run_import(corpus_folder.root)

    assert "line 2 (clip 'missing'), audio: " in str(refused.value)
    assert s3_bucket.keys() == []
    assert (Corpus.objects.count(), Clip.objects.count()) == (0, 0)


def test_objects_stored_before_a_failed_database_write_are_deleted(corpus_folder, s3_bucket, monkeypatch):
    corpus_folder.add("c1")
    corpus_folder.add("c2", "a second clip")
    corpus_folder.write_jsonl()
    stored_before_failure = []

    def failing_write(corpus_name, staged):
        stored_before_failure.extend(s3_bucket.keys())
        raise RuntimeError("database went away")

    monkeypatch.setattr("annotation.services.corpus_import._write_rows", failing_write)

    with pytest.raises(RuntimeError, match="database went away"):
        run_import(corpus_folder.root)

    assert len(stored_before_failure) == 6
    assert s3_bucket.keys() == []
    assert Clip.objects.count() == 0


def test_admin_upload_keeps_the_archive_in_the_bucket_until_the_job_ran(
    corpus_folder, s3_bucket, client, tmp_path, django_capture_on_commit_callbacks
):
    corpus_folder.add("c1")
    corpus_folder.write_jsonl()
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in corpus_folder.root.rglob("*"):
            bundle.write(path, f"corpus/{path.relative_to(corpus_folder.root)}")
    client.force_login(get_user_model().objects.create_superuser("admin", "admin@example.com", "pw"))

    with django_capture_on_commit_callbacks() as queued, open(archive, "rb") as handle:
        response = client.post(reverse("admin:annotation_importjob_add"), {"archive": handle, "corpus_name": "zipped"})
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert s3_bucket.keys() == [job.archive.name]
    assert re.fullmatch(r"imports/[0-9a-f]{32}\.zip", job.archive.name)
    assert s3_bucket.read(job.archive.name) == archive.read_bytes()

    for callback in queued:  # the task runs eagerly here (see conftest.eager_celery)
        callback()

    job.refresh_from_db()
    assert job.status == ImportJob.Status.SUCCEEDED, job.summary
    assert job.summary["created"] == 1
    clip = Clip.objects.get()
    assert s3_bucket.keys() == sorted([clip.original_audio.name, clip.model_audio.name, clip.browser_audio.name])
