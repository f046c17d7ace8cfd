from celery import shared_task
from django.db import DatabaseError

from annotation.services.adaptive_model import REFIT_TASK, ordinal_model_refit
from annotation.services.corpus_import_jobs import corpus_import_run
from annotation.services.webhooks import webhook_delivery_run


@shared_task(
    name="annotation.corpus_import_run", acks_late=True
)  # idempotent: annotation.shared.jobs claims each job once
def corpus_import_run_task(job_id: int) -> None:
    corpus_import_run(job_id=job_id)


# acks_late: the claim takes a delivery once, and an attempt first looks for a recorded 2xx answer,
# so a second message sends nothing after a success.
@shared_task(name="annotation.webhook_delivery_run", acks_late=True)
def webhook_delivery_run_task(job_id: int) -> None:
    webhook_delivery_run(delivery_id=job_id)


# No claim needed: a refit reads all of the study's annotations and stores its model only if it saw
# more than the stored one, so a second delivery, or two at once, leave the newest fit. A database
# error (a lock a submission holds, on SQLite) is retried: the next request would come only with
# the next 10 % of annotations.
@shared_task(name=REFIT_TASK, autoretry_for=(DatabaseError,), retry_backoff=1, max_retries=5)
def adaptive_model_refit_task(study_id: int) -> None:
    ordinal_model_refit(study_id=study_id)
