"""The runner every background job goes through: queue, claim, progress, failure capture, staleness.

A job kind is a concrete `annotation.models.background_job.BackgroundJob` and a Celery task that
calls `job_run(model=..., job_id=..., work=...)`. `work(job, progress)` does the job's own work,
calls `progress(phase, done, total)` as it goes, and returns the fields to store on success; it
raises `JobFailed` for an expected failure whose message the user should read. Anything else it
raises fails the job with "internal error: ...", so a job never stays "running" after a crash.

Delivery: tasks are enqueued once the job's row is committed. The claim is a conditional update
(QUEUED -> RUNNING), so a second delivery of the same message does nothing. While a job runs, a
heartbeat thread in its worker process refreshes `heartbeat_at` every HEARTBEAT_SECONDS whatever
the work is doing (loading a model, training, zipping), so silence means the process is gone. A
worker killed mid-job leaves the job RUNNING; `stale_jobs_requeue` queues it again once it has been
silent for its kind's STALE_AFTER, or fails it after MAX_ATTEMPTS starts. It runs every
SWEEP_SECONDS in every Celery worker (`jobs_sweep_periodically`, started by config.celery), when
a worker starts, by `manage.py requeue_stale_jobs`, and when a job's page is polled. A worker that
was only slow, not dead, finds its claim gone at its next progress write or at the end and stops
without writing: one result per job, never two.

Retries: `work` raises `JobRetry(message, delay=...)` for a transient failure; the job is queued
again and sent after `delay` seconds (webhook deliveries use it for their backoff).

Endings: the runner sits below the services and imports none of them. What else happens when jobs
end is registered with `job_end_listen` when the apps are ready: annotation's webhooks send the
event a kind's WEBHOOK_EVENTS names when one of its jobs succeeds or fails
(annotation.services.webhooks.webhook_jobs_ended, registered in annotation/apps.py).

Tasks are reached by name (`task_send`), never imported: tasks.py sits above the services it calls.
"""

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from celery import current_app
from django.apps import apps
from django.db import DatabaseError, connection, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.models.background_job import BackgroundJob

JobT = TypeVar("JobT", bound=BackgroundJob)  # job_refresh hands back the kind of job it was given

logger = logging.getLogger(__name__)
PROGRESS_EVERY_SECONDS = 0.5
# A running job's heartbeat, and the sweep for silent ones in every worker. The shortest STALE_AFTER
# (90 s, benchmark and detection runs) spans six heartbeats; a dead worker's run is queued again at
# most STALE_AFTER + SWEEP_SECONDS after its last one.
HEARTBEAT_SECONDS = 15.0
SWEEP_SECONDS = 30.0
Status = BackgroundJob.Status


class JobFailed(Exception):
    """An expected failure: `message` is shown to the user, `fields` are stored on the job."""

    def __init__(self, message: str, **fields):
        super().__init__(message)
        self.message = message
        self.fields = fields


class JobRetry(Exception):
    """A transient failure: queue the job again in `delay` seconds. The work itself decides how
    many attempts it allows (raising JobFailed at the last)."""

    def __init__(self, message: str, *, delay: float):
        super().__init__(message)
        self.message = message
        self.delay = delay


class JobLost(Exception):
    """This worker's claim on the job is gone (it was re-queued as stale): stop, write nothing."""


# Called with (model=, job_ids=, status=) when jobs of a kind end so (job_end_listen).
JobEndListener = Callable[..., None]
_end_listeners: list[JobEndListener] = []


def job_end_listen(listener: JobEndListener) -> None:
    """Call `listener(model=..., job_ids=..., status=...)` whenever jobs end (from an AppConfig.ready)."""
    if listener not in _end_listeners:
        _end_listeners.append(listener)


def job_kinds() -> list[type[BackgroundJob]]:
    """Every concrete background-job model of the project."""
    return [model for model in apps.get_models() if issubclass(model, BackgroundJob)]


def job_enqueue(job: BackgroundJob) -> None:
    """Send the job to its worker once the transaction that created it commits."""
    _send_on_commit(type(job), job.pk)


def _send_on_commit(model: type[BackgroundJob], job_id: int) -> None:
    # After the commit, so the worker finds the row as queued.
    transaction.on_commit(lambda: _send(model, job_id))


def _send(model: type[BackgroundJob], job_id: int, countdown: float | None = None) -> None:
    task_send(model.TASK_NAME, job_id, countdown=countdown)


def task_send(name: str, *args, countdown: float | None = None) -> None:
    """Send the task registered as `name`, run at once or queued as the settings say (unlike
    `send_task`, which always queues)."""
    current_app.loader.import_default_modules()  # registers the tasks of every app
    current_app.tasks[name].apply_async(args=list(args), countdown=countdown)


def job_run(*, model: type[BackgroundJob], job_id: int, work: Callable) -> None:
    """Claim the job, run `work(job, progress)`, and store how it ended."""
    job = _claim(model, job_id)
    if job is None:
        return
    progress = ProgressWriter(model, job_id, attempt=job.attempts)
    try:
        with Heartbeat(model, job_id, attempt=job.attempts):
            fields = work(job, progress) or {}
    except JobLost:
        logger.warning("%s %s was re-queued while this worker ran it; its result is dropped", model.__name__, job_id)
        return
    except JobRetry as retry:
        _queue_again_later(model, job, retry)
    except JobFailed as failed:
        _finish(model, job, status=Status.FAILED, error=failed.message, **failed.fields)
    except Exception as error:
        logger.exception("%s %s crashed", model.__name__, job_id)
        _finish(model, job, status=Status.FAILED, error=f"internal error: {error}")
    else:
        _finish(model, job, status=Status.SUCCEEDED, done=F("total"), **fields)


def _claim(model: type[BackgroundJob], job_id: int) -> BackgroundJob | None:
    # The conditional update is the claim: a second delivery finds the job taken.
    now = timezone.now()
    claimed = model.objects.filter(pk=job_id, status=Status.QUEUED).update(
        status=Status.RUNNING, phase="starting", started_at=now, heartbeat_at=now, attempts=F("attempts") + 1
    )
    return model.objects.get(pk=job_id) if claimed else None


def _finish(model: type[BackgroundJob], job: BackgroundJob, *, status: str, **fields) -> None:
    finished = model.objects.filter(pk=job.pk, status=Status.RUNNING, attempts=job.attempts).update(
        status=status,
        phase="finished" if status == Status.SUCCEEDED else "failed",
        finished_at=timezone.now(),
        **fields,
    )
    if not finished:
        logger.warning("%s %s was re-queued while this worker ran it; its result is dropped", model.__name__, job.pk)
        return
    _announce(model, [job.pk], status)


def _queue_again_later(model: type[BackgroundJob], job: BackgroundJob, retry: JobRetry) -> None:
    # The heartbeat is set to when the retry is due, so the stale sweep does not send the job
    # early: it counts its STALE_AFTER from then.
    due = timezone.now() + timedelta(seconds=retry.delay)
    queued = model.objects.filter(pk=job.pk, status=Status.RUNNING, attempts=job.attempts).update(
        status=Status.QUEUED,
        phase=f"waiting to try again ({retry.message})"[:100],
        error=retry.message,
        heartbeat_at=due,
    )
    if queued:
        transaction.on_commit(lambda: _send(model, job.pk, countdown=retry.delay))


def _announce(model: type[BackgroundJob], job_ids: list[int], status: str) -> None:
    """Tell the listeners (job_end_listen) that these jobs ended so."""
    if not job_ids:
        return
    for listener in _end_listeners:
        listener(model=model, job_ids=job_ids, status=status)


class ProgressWriter:
    """`progress(phase, done, total)`: stores the job's progress, at most every 0.5 s within a
    phase (always at a new phase and at the end), and refreshes its heartbeat."""

    def __init__(self, model: type[BackgroundJob], job_id: int, *, attempt: int):
        self.model, self.job_id, self.attempt = model, job_id, attempt
        self._last_at, self._last_phase = 0.0, None

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        same_phase = phase == self._last_phase
        if same_phase and done < total and now - self._last_at < PROGRESS_EVERY_SECONDS:
            return
        self._last_at, self._last_phase = now, phase
        written = self.model.objects.filter(pk=self.job_id, status=Status.RUNNING, attempts=self.attempt).update(
            phase=phase[:100], done=done, total=total, heartbeat_at=timezone.now()
        )
        if not written:
            raise JobLost


class Heartbeat:
    """`with Heartbeat(...)`: a thread refreshes the job's heartbeat every HEARTBEAT_SECONDS while
    the block runs, through phases that report no progress (a backbone loading for minutes). It
    stops at the end of the block, or when the job is no longer this attempt's (the work finds out
    at its next progress write). Inside a transaction (eager tasks in tests) there is none: another
    connection could not see the job's uncommitted row, and would wait on its lock."""

    def __init__(self, model: type[BackgroundJob], job_id: int, *, attempt: int):
        self.held = model.objects.filter(pk=job_id, status=Status.RUNNING, attempts=attempt)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"heartbeat {model.__name__} {job_id}", daemon=True)

    def __enter__(self):
        if not connection.in_atomic_block:
            self.thread.start()
        return self

    def __exit__(self, *_):
        self.stopped.set()  # not joined: a beat under way ends on its own, writing nothing wrong

    def _beat(self) -> None:
        try:
            while not self.stopped.wait(HEARTBEAT_SECONDS):
                try:
                    if not self.held.update(heartbeat_at=timezone.now()):
                        return
                except DatabaseError as error:  # e.g. SQLite busy with the job's own writes: next beat
                    logger.warning("%s: a beat failed (%s)", self.thread.name, error)
                    connections.close_all()
        finally:
            connections.close_all()  # this thread's own connections


def jobs_sweep_periodically(stopped: threading.Event) -> None:
    """Until `stopped` is set: every SWEEP_SECONDS, queue again the running jobs whose worker went
    silent, of every kind (a Celery worker runs this in a thread; several at once are harmless, as
    each requeue is conditional). Waiting jobs are not sent again here: one waiting behind a long
    run would get a message every STALE_AFTER; a worker's start-up sweep sends those."""
    while not stopped.wait(SWEEP_SECONDS):
        try:
            for model in job_kinds():
                stale_jobs_requeue(model=model, resend_waiting=False)
        except Exception:  # a database or broker hiccup must not end the sweeping for good
            logger.exception("the sweep for stale jobs failed; it runs again in %s s", SWEEP_SECONDS)
        finally:
            connections.close_all()  # this thread's own: no connection held between sweeps


def stale_jobs_requeue(*, model: type[BackgroundJob], job_ids=None, resend_waiting: bool = True) -> dict[str, int]:
    """Queue again the jobs of this kind whose worker went silent (failing those started too
    often), and (with `resend_waiting`) send again those still waiting for a worker after
    STALE_AFTER, in case their message was lost (a second message is harmless: the claim takes the
    job once)."""
    now = timezone.now()
    jobs = model.objects.all() if job_ids is None else model.objects.filter(pk__in=job_ids)
    silent = _silent(model, now)
    stale = jobs.filter(silent, status=Status.RUNNING)
    out_of_attempts = list(stale.filter(attempts__gte=model.MAX_ATTEMPTS).values_list("pk", flat=True))
    failed = stale.filter(pk__in=out_of_attempts).update(
        status=Status.FAILED,
        phase="failed",
        finished_at=now,
        error=f"its worker stopped {model.MAX_ATTEMPTS} times before it finished; not tried again",
    )
    _announce(model, out_of_attempts, Status.FAILED)
    counts = {"requeued": 0, "failed": failed, "resent": 0}
    for job_id in stale.values_list("pk", flat=True):
        # Conditional again: two sweeps at once queue each job once.
        if stale.filter(pk=job_id).update(
            status=Status.QUEUED, phase="queued again: its worker stopped", heartbeat_at=now
        ):
            _send_on_commit(model, job_id)
            counts["requeued"] += 1
    waiting = jobs.filter(silent, status=Status.QUEUED) if resend_waiting else model.objects.none()
    for job_id in waiting.values_list("pk", flat=True):
        if waiting.filter(pk=job_id).update(heartbeat_at=now):
            _send_on_commit(model, job_id)
            counts["resent"] += 1
    return counts


def job_fail_unattended(*, model: type[BackgroundJob], job_id: int, error: str) -> bool:
    """Fail the job now if no worker holds it: still queued, or running with its worker silent for
    STALE_AFTER (for a job cancelled before or after its worker died). A worker that claims it later
    finds it taken; one that was only slow finds its claim gone at its next progress write.
    Whether it was failed."""
    now = timezone.now()
    unattended = Q(status=Status.QUEUED) | (Q(status=Status.RUNNING) & _silent(model, now))
    failed = model.objects.filter(unattended, pk=job_id).update(
        status=Status.FAILED, phase="failed", error=error, finished_at=now
    )
    if failed:
        _announce(model, [job_id], Status.FAILED)
    return bool(failed)


def _silent(model: type[BackgroundJob], now) -> Q:
    """Nothing heard of the job for its kind's STALE_AFTER (BackgroundJob.is_silent, as a filter)."""
    return Q(heartbeat_at__lt=now - model.STALE_AFTER) | Q(heartbeat_at=None, created_at__lt=now - model.STALE_AFTER)


def stale_jobs_requeue_every_kind() -> dict[str, dict[str, int]]:
    """`stale_jobs_requeue` for every job kind."""
    return {model._meta.label: stale_jobs_requeue(model=model) for model in job_kinds()}


def job_refresh(job: JobT) -> JobT:
    """The job as stored now, re-queued first if its worker went silent (for pages that poll it)."""
    if job.is_silent():
        stale_jobs_requeue(model=type(job), job_ids=[job.pk])
        job.refresh_from_db()
    return job
