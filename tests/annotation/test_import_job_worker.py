"""Admin upload -> ImportJob -> a real Celery worker consuming from a real broker.

The project's Celery app is pointed at CELERY_TEST_BROKER_URL (default
redis://127.0.0.1:6379/15) and a private queue for the duration of one test,
and celery.contrib.testing runs a solo-pool worker for it in a thread of this
process. The thread shares the test database (PostgreSQL, or SQLite's shared
in-memory database) and the per-test media folder, and the tests use
transactional_db so that the worker sees what the test committed.
"""

import logging
import os
import threading
import time
import uuid
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest
from celery import signals
from celery.app.trace import reset_worker_optimizations
from celery.contrib.testing.worker import start_worker
from celery.worker import state as worker_state
from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.urls import reverse

from annotation.models import Clip, Corpus, ImportJob, Speaker, Word
from config.celery import app as celery_app
from tests.conftest import require_service

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
JOB_TIMEOUT_SECONDS = 60
TASK_NAME = "annotation.corpus_import_run"


def _open_gate() -> threading.Event:
    gate = threading.Event()
    gate.set()
    return gate


@dataclass
class Worker:
    queue: str
    deliveries: list[dict] = field(default_factory=list)
    gate: threading.Event = field(default_factory=_open_gate)

    @contextmanager
    def held(self):
        """Tasks delivered meanwhile wait to start until the block ends.

        On SQLite's shared-cache in-memory test database a write in this thread
        (the rest of an admin request after its commit published the task: the
        session, the messages) makes the worker's first write fail at once with
        "database table is locked"; a file database in WAL mode, as deployed,
        waits instead."""
        self.gate.clear()
        try:
            yield
        finally:
            self.gate.set()


@contextmanager
def app_on_broker(app, broker_url: str, queue: str):
    """Point the app at broker_url and a private queue; put everything back afterwards."""
    overrides = {
        "broker_url": broker_url,
        "broker_transport_options": {},  # the embedded filesystem broker's options mean nothing here
        "task_always_eager": False,
        "task_default_queue": queue,
        "worker_enable_remote_control": False,
        "worker_hijack_root_logger": False,
    }
    previous_conf = {key: app.conf[key] for key in overrides}
    # app.amqp caches queues, router and producer pool, app._pool the connection
    # pool: drop both so that they are rebuilt for the test broker, and restore them.
    previous_amqp = app.__dict__.pop("amqp", None)
    previous_pool, app._pool = app._pool, None
    app.conf.update(overrides)
    try:
        yield
    finally:
        app.conf.update(previous_conf)
        app.__dict__.pop("amqp", None)
        if previous_amqp is not None:
            app.__dict__["amqp"] = previous_amqp
        app._pool = previous_pool


def _stop_promptly(controller) -> None:
    """Ask the worker to stop, as start_worker does on exit, and wake its event
    loop, which would otherwise sleep up to 10 s (amqp) before noticing."""
    worker_state.should_terminate = 0
    hub = getattr(controller, "hub", None)
    if hub is not None:
        hub.call_soon(lambda: None)


def _delete_queue(app, queue: str) -> None:
    """Remove the private queue and its exchange (named after it) from the broker."""
    with app.connection_for_write() as conn:
        bound = app.amqp.queues[queue].bind(conn.default_channel)
        bound.declare()  # a virtual (redis) channel only deletes bindings it knows of
        bound.delete()
        bound.exchange.delete()


@pytest.fixture
def celery_worker(transactional_db):
    """A solo-pool worker thread consuming a private queue on the test broker."""
    require_service("Celery broker", BROKER_URL)
    worker = Worker(queue=f"test-import-jobs-{uuid.uuid4().hex[:12]}")

    def record_delivery(task=None, args=None, **kwargs):
        worker.gate.wait(JOB_TIMEOUT_SECONDS)
        worker.deliveries.append(
            {
                "task": task.name,
                "args": list(args or ()),
                "eager": bool(task.request.is_eager),
                "routing_key": (task.request.delivery_info or {}).get("routing_key"),
                "thread": threading.get_ident(),
            }
        )

    def close_worker_connections(**kwargs):
        connections.close_all()  # the worker thread's own connections

    def leave_logging_alone(**kwargs):
        """A setup_logging receiver stops the worker reconfiguring pytest's root logger."""

    warnings_were_captured = logging._warnings_showwarning is not None
    signals.task_prerun.connect(record_delivery, weak=False)
    signals.task_postrun.connect(close_worker_connections, weak=False)
    signals.setup_logging.connect(leave_logging_alone, weak=False)
    try:
        with app_on_broker(celery_app, BROKER_URL, worker.queue):
            try:
                with start_worker(
                    celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=JOB_TIMEOUT_SECONDS
                ) as controller:
                    try:
                        yield worker
                    finally:
                        _stop_promptly(controller)
            finally:
                _delete_queue(celery_app, worker.queue)
    finally:
        signals.task_prerun.disconnect(record_delivery)
        signals.task_postrun.disconnect(close_worker_connections)
        signals.setup_logging.disconnect(leave_logging_alone)
        reset_worker_optimizations(celery_app)
        if not warnings_were_captured:
            logging.captureWarnings(False)


@pytest.fixture
def reads_never_block_the_worker(transactional_db):
    """On the shared-cache in-memory SQLite test database a reader takes table
    locks that make the worker's writes fail at once ("database table is
    locked"); read_uncommitted lets this thread poll without taking them.
    (A file database in WAL mode, as in production, has no such locks.)"""
    in_memory = connection.vendor == "sqlite" and connection.is_in_memory_db()
    if in_memory:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA read_uncommitted = 1")
    yield
    if in_memory:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA read_uncommitted = 0")


@pytest.fixture
def admin_browser(client, transactional_db):
    get_user_model().objects.create_superuser("boss", "boss@example.com", "a long admin password")
    assert client.login(username="boss", password="a long admin password")
    return client


def zip_of(folder, archive):
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted(folder.root.rglob("*")):
            bundle.write(path, f"corpus/{path.relative_to(folder.root)}")
    return archive


def upload(client, archive, corpus_name: str, *, skip_invalid: bool = False):
    data = {"corpus_name": corpus_name}
    if skip_invalid:
        data["skip_invalid"] = "on"
    with open(archive, "rb") as handle:
        return client.post(reverse("admin:annotation_importjob_add"), {**data, "archive": handle}, follow=True)


def wait_until_finished(job_id: int, timeout: float = JOB_TIMEOUT_SECONDS) -> ImportJob:
    deadline = time.monotonic() + timeout
    while True:
        job = ImportJob.objects.get(pk=job_id)
        if job.finished:
            return job
        if time.monotonic() > deadline:
            pytest.fail(
                f"import job {job_id} still {job.status} ({job.phase} {job.done}/{job.total}) after {timeout} s"
            )
        time.sleep(0.1)


def queued_job_from(response) -> ImportJob:
    job = ImportJob.objects.get()
    assert response.status_code == 200
    assert response.redirect_chain == [(reverse("admin:annotation_importjob_change", args=[job.pk]), 302)]
    return job


def assert_went_through_the_broker(worker: Worker, job: ImportJob) -> None:
    """Exactly one delivery of the job's task, off the private queue, run by the worker thread."""
    assert celery_app.conf.task_always_eager is False
    assert [(d["task"], d["args"], d["eager"], d["routing_key"]) for d in worker.deliveries] == [
        (TASK_NAME, [job.pk], False, worker.queue)
    ]
    assert worker.deliveries[0]["thread"] != threading.get_ident()


def test_uploaded_archive_is_imported_by_the_worker(
    celery_worker, reads_never_block_the_worker, admin_browser, corpus_folder, tmp_path, media_storage
):
    corpus_folder.add("c1", speaker="s1")
    corpus_folder.add("c2", "a second clip", speaker="s1")
    corpus_folder.add("c3", "and a third one", suffix=".flac")
    corpus_folder.write_jsonl()
    archive = zip_of(corpus_folder, tmp_path / "bundle.zip")

    with celery_worker.held():
        response = upload(admin_browser, archive, "via-worker")

    job = queued_job_from(response)
    assert (job.corpus_name, job.archive_name, job.created_by.username) == ("via-worker", "bundle.zip", "boss")
    job = wait_until_finished(job.pk)
    assert job.status == ImportJob.Status.SUCCEEDED, (job.summary, job.problems)
    assert job.summary["created"] == 3 and job.summary["rows"] == 3
    assert job.problems == [] and job.phase == "finished" and job.finished_at is not None
    assert sorted(Clip.objects.filter(corpus__name="via-worker").values_list("external_id", flat=True)) == [
        "c1",
        "c2",
        "c3",
    ]
    assert Speaker.objects.get().name == "s1" and Word.objects.count() == 13
    assert all(clip.browser_audio.storage.exists(clip.browser_audio.name) for clip in Clip.objects.all())
    assert not (media_storage / job.archive.name).exists()  # the worker removed the upload
    assert_went_through_the_broker(celery_worker, job)
    progress = admin_browser.get(
        reverse("admin:annotation_importjob_progress", args=[job.pk]), headers={"HX-Request": "true"}
    )
    assert progress.status_code == 286  # htmx stops polling once the job is finished


def test_a_bad_row_fails_the_job_and_writes_nothing(
    celery_worker, reads_never_block_the_worker, admin_browser, corpus_folder, tmp_path, media_storage
):
    corpus_folder.add("good")
    corpus_folder.add("missing", write=False)
    corpus_folder.add("empty", " ")
    corpus_folder.write_jsonl()
    archive = zip_of(corpus_folder, tmp_path / "bad.zip")

    with celery_worker.held():
        job = queued_job_from(upload(admin_browser, archive, "refused"))

    job = wait_until_finished(job.pk)
    assert job.status == ImportJob.Status.FAILED
    assert job.error == "2 bad row(s); nothing was imported"
    assert [(p["line"], p["clip_id"], p["field"]) for p in job.problems] == [
        (2, "missing", "audio"),
        (3, "empty", "transcript"),
    ]
    assert "audio/missing.wav" in job.problems[0]["reason"] and "not found" in job.problems[0]["reason"]
    assert (Corpus.objects.count(), Clip.objects.count(), Word.objects.count()) == (0, 0, 0)
    assert [path for path in media_storage.rglob("*") if path.is_file()] == []
    assert_went_through_the_broker(celery_worker, job)
    page = admin_browser.get(reverse("admin:annotation_importjob_change", args=[job.pk]))
    assert page.status_code == 200 and b"<td>missing</td>" in page.content
