"""Celery tasks. Each is registered as `<app>.<the service it runs>` (name= below), so a
task's name says what it does and stays put if this module moves; models name it in TASK_NAME."""

from celery import shared_task

from annotation.ingest.jobs import corpus_import_run
from annotation.services.prolific_send import prolific_decisions_send_run


@shared_task(name="annotation.corpus_import_run", acks_late=True)  # idempotent: annotation.jobs claims each job once
def corpus_import_run_task(job_id: int) -> None:
    corpus_import_run(job_id=job_id)


# acks_late: the claim makes a second delivery a no-op. A worker killed mid-send leaves the job to be
# re-queued as stale: decisions marked sent are not sent again; one whose answer died with the worker
# is, and Prolific refuses it as already decided, which the outcome reports.
@shared_task(name="annotation.prolific_decisions_send_run", acks_late=True)
def prolific_decisions_send_run_task(job_id: int) -> None:
    prolific_decisions_send_run(job_id=job_id)
