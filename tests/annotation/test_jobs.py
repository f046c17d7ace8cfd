"""The one background-job runner: claim once, progress, failures, silent workers, every kind on it."""

import ast
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import ImportJob
from annotation.shared import jobs
from annotation.shared.jobs import JobFailed, JobLost, ProgressWriter, job_kinds, job_run, stale_jobs_requeue
from config.celery import app as celery_app

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
Status = ImportJob.Status


def queued_job(**fields) -> ImportJob:
    return ImportJob.objects.create(corpus_name="c", archive_name="a.zip", **fields)


def stored(job) -> ImportJob:
    return ImportJob.objects.get(pk=job.pk)


def test_a_job_runs_once_and_stores_what_its_work_returns():
    job, calls = queued_job(), []

    def work(claimed, progress):
        calls.append(claimed.status)
        progress("importing", 3, 4)
        return {"summary": {"created": 4}}

    job_run(model=ImportJob, job_id=job.pk, work=work)
    job_run(model=ImportJob, job_id=job.pk, work=work)  # a second delivery of the same message

    job = stored(job)
    assert calls == [Status.RUNNING]
    assert (job.status, job.phase, job.summary, job.attempts) == (Status.SUCCEEDED, "finished", {"created": 4}, 1)
    assert job.done == job.total == 4 and job.started_at <= job.heartbeat_at <= job.finished_at


def test_an_expected_failure_keeps_its_message_and_fields():
    job = queued_job()

    def work(claimed, progress):
        raise JobFailed("2 bad row(s); nothing was imported", problems=[{"line": 3}])

    job_run(model=ImportJob, job_id=job.pk, work=work)

    job = stored(job)
    assert (job.status, job.error, job.problems, job.phase) == (
        Status.FAILED,
        "2 bad row(s); nothing was imported",
        [{"line": 3}],
        "failed",
    )


def test_a_crash_fails_the_job_instead_of_leaving_it_running():
    job = queued_job()

    def work(claimed, progress):
        raise RuntimeError("disk full")

    job_run(model=ImportJob, job_id=job.pk, work=work)

    job = stored(job)
    assert (job.status, job.error) == (Status.FAILED, "internal error: disk full") and job.finished_at


def test_progress_is_throttled_within_a_phase_but_always_written_at_a_new_phase_and_the_end(monkeypatch):
    job = queued_job()
    job_run(model=ImportJob, job_id=job.pk, work=lambda claimed, progress: None)
    ImportJob.objects.filter(pk=job.pk).update(status=Status.RUNNING)
    clock = iter([100.0, 100.1, 100.2, 100.3, 100.9])
    monkeypatch.setattr(jobs.time, "monotonic", lambda: next(clock))
    progress = ProgressWriter(ImportJob, job.pk, attempt=1)

    written = []
    for phase, done, total in [("a", 1, 10), ("a", 2, 10), ("b", 1, 10), ("b", 10, 10), ("b", 5, 10)]:
        progress(phase, done, total)
        job = stored(job)
        written.append((job.phase, job.done))

    # ("a", 2) comes 0.1 s after ("a", 1): skipped; ("b", 5) comes 0.6 s after ("b", 10): written.
    assert written == [("a", 1), ("a", 1), ("b", 1), ("b", 10), ("b", 5)]


def test_a_worker_whose_job_was_requeued_stops_and_writes_nothing():
    job = queued_job()

    def slow_work(claimed, progress):
        # Meanwhile the job was taken as stale and started again by another worker (attempt 2).
        ImportJob.objects.filter(pk=claimed.pk).update(attempts=2)
        progress("importing", 1, 2)
        return {"summary": {"created": 99}}

    job_run(model=ImportJob, job_id=job.pk, work=slow_work)

    job = stored(job)
    assert (job.status, job.summary, job.finished_at) == (Status.RUNNING, {}, None)
    with pytest.raises(JobLost):
        ProgressWriter(ImportJob, job.pk, attempt=1)("importing", 2, 2)


def silent_since() -> timezone.datetime:
    return timezone.now() - ImportJob.STALE_AFTER - timedelta(seconds=1)


def test_a_job_left_running_by_a_killed_worker_is_queued_again_and_run(django_capture_on_commit_callbacks, monkeypatch):
    job = queued_job(status=Status.RUNNING, attempts=1, heartbeat_at=silent_since())
    lively = queued_job(status=Status.RUNNING, attempts=1, heartbeat_at=timezone.now())
    monkeypatch.setattr(jobs, "_send", lambda model, job_id: job_run(model=model, job_id=job_id, work=lambda j, p: {}))

    with django_capture_on_commit_callbacks(execute=True):
        counts = stale_jobs_requeue(model=ImportJob)

    assert counts == {"requeued": 1, "failed": 0, "resent": 0}
    assert (stored(job).status, stored(job).attempts) == (Status.SUCCEEDED, 2)
    assert stored(lively).status == Status.RUNNING  # its worker is alive: left alone


def test_a_job_whose_workers_keep_dying_fails_after_its_attempts():
    job = queued_job(status=Status.RUNNING, attempts=ImportJob.MAX_ATTEMPTS, heartbeat_at=silent_since())

    assert stale_jobs_requeue(model=ImportJob) == {"requeued": 0, "failed": 1, "resent": 0}

    job = stored(job)
    assert job.status == Status.FAILED and "stopped 3 times" in job.error and job.finished_at


def test_a_job_no_worker_took_is_sent_again(django_capture_on_commit_callbacks, monkeypatch):
    job = queued_job()
    ImportJob.objects.filter(pk=job.pk).update(created_at=silent_since())
    sent = []
    monkeypatch.setattr(jobs, "_send", lambda model, job_id: sent.append((model, job_id)))

    with django_capture_on_commit_callbacks(execute=True):
        first = stale_jobs_requeue(model=ImportJob)
        second = stale_jobs_requeue(model=ImportJob)  # sent a moment ago: not again

    assert (first["resent"], second["resent"], sent) == (1, 0, [(ImportJob, job.pk)])
    assert stored(job).status == Status.QUEUED


def test_the_command_reports_what_it_did():
    queued_job(status=Status.RUNNING, attempts=ImportJob.MAX_ATTEMPTS, heartbeat_at=silent_since())
    out = []

    class Out:
        def write(self, text):
            out.append(text)

    call_command("requeue_stale_jobs", stdout=Out())

    assert "annotation.ImportJob: 0 requeued, 1 failed, 0 resent" in "".join(out)
    assert "stale jobs: 0 requeued, 1 failed, 0 resent" in "".join(out)


def test_every_job_kind_runs_through_the_runner():
    celery_app.loader.import_default_modules()
    kinds = {model._meta.label: model for model in job_kinds()}

    assert {"annotation.ImportJob", "evaluation.AgreementReport", "modelzoo.DetectionRun"} <= set(kinds)
    for label, model in kinds.items():
        task = celery_app.tasks.get(model.TASK_NAME)
        assert task is not None, f"{label}.TASK_NAME names no registered task: {model.TASK_NAME!r}"
        assert task.acks_late, f"{model.TASK_NAME} is idempotent through the claim, so it acknowledges late"


def test_no_module_but_the_runner_claims_or_finishes_a_job():
    """Claims (status -> running) and endings are written in annotation/shared/jobs.py only."""
    offenders = []
    for path in [*ROOT.glob("annotation/**/*.py"), *ROOT.glob("evaluation/**/*.py"), *ROOT.glob("modelzoo/**/*.py")]:
        if path == ROOT / "annotation" / "shared" / "jobs.py" or "migrations" in path.parts:
            continue
        offenders += [f"{path.relative_to(ROOT)}:{line}" for line in _status_updates(path.read_text())]
    assert offenders == []


def _status_updates(source: str) -> list[int]:
    """Lines of `.update(status=X.RUNNING | SUCCEEDED | FAILED, ...)` calls."""
    return [
        call.lineno
        for call in ast.walk(ast.parse(source))
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "update"
        for keyword in call.keywords
        if keyword.arg == "status"
        and isinstance(keyword.value, ast.Attribute)
        and keyword.value.attr in {"RUNNING", "SUCCEEDED", "FAILED"}
    ]


def test_the_status_update_finder_finds_one():
    assert _status_updates("Job.objects.filter(pk=1).update(status=Job.Status.RUNNING)") == [1]


@pytest.mark.django_db(transaction=True)
def test_a_job_keeps_its_heartbeat_through_a_phase_that_reports_nothing(monkeypatch):
    # As a worker runs it (no transaction around it): loading a large model for minutes, say.
    monkeypatch.setattr(jobs, "HEARTBEAT_SECONDS", 0.05)
    job, seen = queued_job(), []

    def work(claimed, progress):
        seen.append(stored(claimed).heartbeat_at)
        time.sleep(1.0)
        seen.append(stored(claimed).heartbeat_at)

    job_run(model=ImportJob, job_id=job.pk, work=work)

    assert seen[1] > seen[0] + timedelta(seconds=0.5)
    assert stored(job).status == Status.SUCCEEDED


@pytest.mark.django_db(transaction=True)
def test_the_periodic_sweep_queues_a_silent_running_job_again_and_leaves_waiting_ones(monkeypatch):
    monkeypatch.setattr(jobs, "SWEEP_SECONDS", 0.05)
    sent = []
    monkeypatch.setattr(jobs, "_send", lambda model, job_id: sent.append(job_id))
    silent = timezone.now() - ImportJob.STALE_AFTER - timedelta(seconds=1)
    running = queued_job(status=Status.RUNNING, attempts=1, heartbeat_at=silent)
    waiting = queued_job(heartbeat_at=silent)
    stopped = threading.Event()
    sweeper = threading.Thread(target=jobs.jobs_sweep_periodically, args=(stopped,))
    sweeper.start()
    try:
        deadline = time.monotonic() + 10
        while stored(running).status != Status.QUEUED and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stopped.set()
        sweeper.join(timeout=10)

    assert stored(running).status == Status.QUEUED and sent == [running.pk]
    assert stored(waiting).heartbeat_at == silent  # not sent again by the periodic sweep
