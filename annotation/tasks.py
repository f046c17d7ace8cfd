from celery import shared_task

from annotation.ingest.jobs import import_job_run


@shared_task(acks_late=True)  # idempotent: annotation.jobs claims each job once
def corpus_import_job_run(job_id: int) -> None:
    import_job_run(job_id=job_id)
