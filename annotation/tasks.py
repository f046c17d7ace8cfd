from celery import shared_task

from annotation.services.corpus_import_jobs import import_job_run
from annotation.services.prolific_send import prolific_send_job_run
from annotation.services.webhooks import webhook_delivery_run


@shared_task(acks_late=True)  # idempotent: annotation.jobs claims each job once
def corpus_import_job_run(job_id: int) -> None:
    import_job_run(job_id=job_id)


# acks_late: the claim makes a second delivery a no-op. A worker killed mid-send leaves the job to be
# re-queued as stale: decisions marked sent are not sent again; one whose answer died with the worker
# is, and Prolific refuses it as already decided, which the outcome reports.
@shared_task(acks_late=True)
def prolific_decisions_send_job_run(job_id: int) -> None:
    prolific_send_job_run(job_id=job_id)


# acks_late: the claim takes a delivery once, and an attempt first looks for a recorded 2xx answer,
# so a second message sends nothing after a success.
@shared_task(acks_late=True)
def webhook_delivery_job_run(job_id: int) -> None:
    webhook_delivery_run(delivery_id=job_id)
