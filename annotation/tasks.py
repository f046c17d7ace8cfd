from celery import shared_task
from django.db import DatabaseError

from annotation.services.adaptive_model import ordinal_model_refit
from annotation.services.corpus_import_jobs import corpus_import_run
from annotation.services.prolific_bonuses import bonus_batch_pay_run
from annotation.services.prolific_send import prolific_decisions_send_run
from annotation.services.prolific_study_jobs import prolific_study_job_run
from annotation.services.webhooks import webhook_delivery_run


@shared_task(name="annotation.corpus_import_run", acks_late=True)  # idempotent: annotation.jobs claims each job once
def corpus_import_run_task(job_id: int) -> None:
    corpus_import_run(job_id=job_id)


# acks_late: the claim makes a second delivery a no-op. A worker killed mid-send leaves the job to be
# re-queued as stale: decisions marked sent are not sent again; one whose answer died with the worker
# is, and Prolific refuses it as already decided, which the outcome reports.
@shared_task(name="annotation.prolific_decisions_send_run", acks_late=True)
def prolific_decisions_send_run_task(job_id: int) -> None:
    prolific_decisions_send_run(job_id=job_id)


# acks_late: the claim takes a delivery once, and an attempt first looks for a recorded 2xx answer,
# so a second message sends nothing after a success.
@shared_task(name="annotation.webhook_delivery_run", acks_late=True)
def webhook_delivery_run_task(job_id: int) -> None:
    webhook_delivery_run(delivery_id=job_id)


# acks_late: the claim takes a job once, and the pay call is guarded by the batch's stage (sent
# once, from CREATED): a second delivery, or a retry after a lost answer, only reconciles.
@shared_task(name="annotation.bonus_batch_pay_run", acks_late=True)
def bonus_batch_pay_run_task(job_id: int) -> None:
    bonus_batch_pay_run(job_id=job_id)


# acks_late: the claim takes a delivery once. A worker killed mid-job leaves it to be re-queued as
# stale; every action but "create" is safe to repeat (a transition Prolific already made is refused,
# places are set to a total, group members are ignored when already in), and "create" refuses a study
# that already has its Prolific id.
@shared_task(name="annotation.prolific_study_job_run", acks_late=True)
def prolific_study_job_run_task(job_id: int) -> None:
    prolific_study_job_run(job_id=job_id)


# No claim needed: a refit reads all of the study's annotations and stores its model only if it saw
# more than the stored one, so a second delivery, or two at once, leave the newest fit. A database
# error (a lock a submission holds, on SQLite) is retried: the next request would come only with
# the next 10 % of annotations.
@shared_task(name="annotation.adaptive_model_refit", autoretry_for=(DatabaseError,), retry_backoff=1, max_retries=5)
def adaptive_model_refit_task(study_id: int) -> None:
    ordinal_model_refit(study_id=study_id)
