"""Uploads within a stated bound (issue 30; annotation/uploads.py): a request's files are refused
as they arrive once they pass IMPORT_MAX_ARCHIVE_BYTES, an archive is refused from the sizes it
declares before anything is extracted, a request never takes more than 2 x IMPORT_MAX_ARCHIVE_BYTES
of temporary disk, and a user has at most IMPORT_MAX_CONCURRENT_PER_USER imports under way.

The limits are scaled down to a few hundred kilobytes so that the files stay small. The temporary
disk is measured, not inferred: the temporary folder (and Django's upload folder) is a folder of
the test's own, and `TempDiskWatch` adds up the bytes in it (each file once, hard links included)
each time this process is about to delete, truncate or move a file (Python's audit events): the
bytes in a folder only fall at such a moment, so the largest of these sums is the peak."""

import io
import os
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Clip, ImportJob, ImportSlot
from evaluation.models import LabelSet
from tests.api.callers import staff_with, token_client
from tests.evaluation.dataset_layouts import emphassess_folder

pytestmark = pytest.mark.django_db
URL = "/api/v1/dataset-imports/"
ADD = "evaluation.add_labelset"
EVENTS = {"os.remove", "os.rmdir", "shutil.rmtree", "os.truncate", "os.rename", "os.replace"}


class TempDiskWatch:
    """The most bytes the watched folder held, sampled before each removal in this process."""

    current = None  # the watch the audit hook reports to, if any

    def __init__(self, folder: Path):
        self.folder, self.peak, self.lock = folder, 0, threading.Lock()

    def size(self) -> int:
        seen, total = set(), 0
        for root, _dirs, files in os.walk(self.folder):
            for name in files:
                try:
                    stat = os.lstat(os.path.join(root, name))
                except FileNotFoundError:  # removed while we walked
                    continue
                if (stat.st_dev, stat.st_ino) not in seen:
                    seen.add((stat.st_dev, stat.st_ino))
                    total += stat.st_size
        return total

    def sample(self) -> None:
        with self.lock:
            self.peak = max(self.peak, self.size())


def _audit(event: str, args) -> None:
    watch = TempDiskWatch.current
    if watch is not None and event in EVENTS:
        watch.sample()


sys.addaudithook(_audit)  # for the whole test process; inert while no watch is current


@pytest.fixture
def temp_disk(tmp_path, settings, monkeypatch):
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    settings.FILE_UPLOAD_TEMP_DIR = str(folder)
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # spooled to disk, as every real archive is
    watch = TempDiskWatch(folder)
    TempDiskWatch.current = watch
    yield watch
    TempDiskWatch.current = None
    watch.sample()
    assert watch.size() == 0, "the request left temporary files behind"


def stored_archive(root: Path) -> bytes:
    """The folder as a .zip whose entries are stored, not deflated: it expands to its own size."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return buffer.getvalue()


def post(client, data: bytes, name: str = "dataset.zip"):
    upload = SimpleUploadedFile(name, data, content_type="application/zip")
    return client.post(
        URL, {"archive": upload, "format": "emphassess", "name": "E", "audio": "audio", "splits": "test"}
    )


def test_an_import_takes_at_most_twice_the_upload_limit_of_temporary_disk(tmp_path, settings, temp_disk):
    # Ten clips: the limit is then well above what the import's two workers convert at a time
    # (a clip's decoded WAV, 16 kHz WAV and MP3), as any real limit is.
    emphassess_folder(tmp_path / "up", count=10)
    data = stored_archive(tmp_path / "up")
    limit = len(data) + 1024
    settings.IMPORT_MAX_ARCHIVE_BYTES = limit

    response = post(token_client(staff_with(ADD)), data)

    assert response.status_code == 201, response.json()
    assert LabelSet.objects.count() == 1 and Clip.objects.count() == 10
    # The upload and its extraction were both on disk at once (the bound is reached), never more.
    assert 2 * len(data) * 0.9 <= temp_disk.peak <= 2 * limit, (temp_disk.peak, len(data), limit)


def test_an_upload_past_the_limit_is_refused_as_it_arrives(settings, temp_disk):
    settings.IMPORT_MAX_ARCHIVE_BYTES = 100_000
    # Its request fits IMPORT_MAX_ARCHIVE_BYTES + DATA_UPLOAD_MAX_MEMORY_SIZE: only counting the bytes
    # as they arrive finds it too large.
    data = zipped_bomb_free(300_000)

    response = post(token_client(staff_with(ADD)), data)

    assert response.status_code == 400
    assert response.json()["detail"] == (
        "Multipart form parse error - dataset.zip: the upload passes 100000 bytes (IMPORT_MAX_ARCHIVE_BYTES); "
        "refused as it arrived"
    )
    assert temp_disk.peak <= 100_000  # Django's temporary file never held more than the limit
    assert not LabelSet.objects.exists() and not ImportSlot.objects.exists()


def test_a_request_whose_length_says_it_is_too_large_is_refused_before_it_is_read(settings, temp_disk):
    settings.IMPORT_MAX_ARCHIVE_BYTES = 100_000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000

    response = post(token_client(staff_with(ADD)), zipped_bomb_free(300_000))

    assert response.status_code == 400 and "uploads are limited to 100000 bytes" in response.json()["detail"]
    assert temp_disk.peak == 0


def zipped_bomb_free(size: int) -> bytes:
    """A stored archive of about `size` bytes of random data (it does not compress)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("gold_df.json", "")
        archive.writestr("audio/noise.bin", os.urandom(size))
    return buffer.getvalue()


def test_a_zip_bomb_is_refused_from_what_it_declares_before_anything_is_extracted(settings, temp_disk):
    """The issue's 4 MB zip of 20 x 200 MiB, scaled down: 20 entries of zeros that declare 20 x
    the limit's twentieth and a little more."""
    settings.IMPORT_MAX_ARCHIVE_BYTES = 200_000
    settings.IMPORT_MAX_FILE_BYTES = 200_000
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("gold_df.json", "")
        for n in range(20):
            archive.writestr(f"audio/{n:02d}.wav", bytes(10_050))
    data = buffer.getvalue()
    assert len(data) < 5_000  # it compresses some 40 times

    response = post(token_client(staff_with(ADD)), data)

    assert response.status_code == 400
    assert response.json()["detail"] == (
        "dataset.zip: declares 201000 bytes uncompressed; the limit is 200000 (IMPORT_MAX_ARCHIVE_BYTES); "
        "refusing a possible zip bomb"
    )
    assert temp_disk.peak <= len(data)  # the upload only: not a byte of it was extracted


def test_an_entry_that_lies_about_its_size_is_stopped_at_the_limit(settings, temp_disk):
    settings.IMPORT_MAX_ARCHIVE_BYTES = 200_000
    settings.IMPORT_MAX_FILE_BYTES = 150_000
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("gold_df.json", "")
        archive.writestr("audio/liar.wav", bytes(1_000_000))
    data = _declared_smaller(buffer.getvalue(), "audio/liar.wav", 1_000)

    response = post(token_client(staff_with(ADD)), data)

    assert response.status_code == 400
    assert response.json()["detail"].startswith("dataset.zip: entry 'audio/liar.wav' does not match its header")
    assert temp_disk.peak <= len(data) + 1_000 + 1024 * 1024  # at most one read chunk past the header's size


def _declared_smaller(data: bytes, name: str, size: int) -> bytes:
    """The archive with `name`'s uncompressed size rewritten to `size` in its central directory
    entry (what zipfile, and the limits, read)."""
    raw = bytearray(data)
    position = raw.find(b"PK\x01\x02")
    while position != -1:
        name_length = int.from_bytes(raw[position + 28 : position + 30], "little")
        if raw[position + 46 : position + 46 + name_length] == name.encode():
            raw[position + 24 : position + 28] = size.to_bytes(4, "little")
            return bytes(raw)
        position = raw.find(b"PK\x01\x02", position + 4)
    raise AssertionError(f"{name} is not in the archive")


def test_a_user_has_at_most_the_allowed_imports_under_way(settings):
    settings.IMPORT_MAX_CONCURRENT_PER_USER = 1
    busy_user, other_user = staff_with(ADD, "annotation.add_importjob"), staff_with(ADD)
    ImportSlot.objects.create(user=busy_user, what="POST /api/v1/dataset-imports/")  # one under way

    refused = post(token_client(busy_user), b"not even a zip")
    other = post(token_client(other_user), b"not even a zip")

    assert refused.status_code == 429 and refused["Retry-After"] == "30"
    assert refused.json()["detail"] == (
        "you have 1 import(s) under way; at most 1 at once (IMPORT_MAX_CONCURRENT_PER_USER): "
        "try again when one has finished"
    )
    assert other.status_code == 400  # counted per user: the other user's upload was read, and refused
    assert ImportSlot.objects.count() == 1  # the refused request took none; the other gave its back


def test_a_queued_corpus_import_counts_as_one_under_way(settings):
    settings.IMPORT_MAX_CONCURRENT_PER_USER = 1
    user = staff_with("annotation.add_importjob")
    ImportJob.objects.create(corpus_name="c", archive_name="a.zip", created_by=user)

    response = token_client(user).post(
        "/api/v1/import-jobs/", {"archive": SimpleUploadedFile("b.zip", b"x"), "corpus_name": "c"}
    )

    assert response.status_code == 429 and "1 import(s) under way" in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_two_uploads_side_by_side_the_second_is_refused_while_the_first_runs(tmp_path, settings, monkeypatch):
    settings.IMPORT_MAX_CONCURRENT_PER_USER = 1
    emphassess_folder(tmp_path / "up")
    data = stored_archive(tmp_path / "up")
    user = staff_with(ADD)
    started, finish = threading.Event(), threading.Event()

    from evaluation.services import dataset_uploads

    real_import = dataset_uploads.label_set_import

    def slow_import(**kwargs):
        started.set()
        assert finish.wait(30)
        return real_import(**kwargs)

    monkeypatch.setattr(dataset_uploads, "label_set_import", slow_import)
    first: dict = {}

    def run_first():
        try:
            first["response"] = post(token_client(user), data)
        finally:
            from django.db import connection

            connection.close()

    thread = threading.Thread(target=run_first)
    thread.start()
    try:
        assert started.wait(30)
        second = post(token_client(user), data)
    finally:
        finish.set()
        thread.join(60)

    assert second.status_code == 429
    assert first["response"].status_code == 201, first["response"].json()
    assert not ImportSlot.objects.exists()
    assert post(token_client(user), b"not a zip").status_code == 400  # free again: read, and refused


def test_the_admins_corpus_upload_past_the_limit_is_400_naming_it(admin_client, settings, temp_disk):
    settings.IMPORT_MAX_ARCHIVE_BYTES = 100_000
    upload = SimpleUploadedFile("corpus.zip", zipped_bomb_free(300_000), content_type="application/zip")

    response = admin_client.post("/admin/annotation/importjob/add/", {"archive": upload, "corpus_name": "c"})

    assert response.status_code == 400
    assert response.content.decode() == (
        "Bad request: corpus.zip: the upload passes 100000 bytes (IMPORT_MAX_ARCHIVE_BYTES); refused as it arrived\n"
    )
    assert temp_disk.peak <= 100_000 and not ImportJob.objects.exists()


def test_the_admins_corpus_upload_counts_the_imports_under_way(admin_client, admin_user, settings, tmp_path):
    settings.IMPORT_MAX_CONCURRENT_PER_USER = 1
    ImportJob.objects.create(corpus_name="c", archive_name="a.zip", created_by=admin_user, status="running")
    upload = SimpleUploadedFile("corpus.zip", zipped_bomb_free(1_000), content_type="application/zip")

    response = admin_client.post("/admin/annotation/importjob/add/", {"archive": upload, "corpus_name": "c"})

    assert response.status_code == 200 and ImportJob.objects.count() == 1
    assert "Not queued: you have 1 import(s) under way; at most 1 at once" in response.content.decode()
    assert not ImportSlot.objects.exists()
