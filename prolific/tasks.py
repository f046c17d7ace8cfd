from celery import shared_task

from prolific.services.bonuses import bonus_batch_pay_run
from prolific.services.send import prolific_decisions_send_run
from prolific.services.study_jobs import prolific_study_job_run
from prolific.services.webhooks import prolific_webhook_process_run


# acks_late: the claim makes a second delivery a no-op. A worker killed mid-send leaves the job to be
# re-queued as stale: decisions marked sent are not sent again; one whose answer died with the worker
# is, and Prolific refuses it as already decided, which the outcome reports.
@shared_task(name="prolific.prolific_decisions_send_run", acks_late=True)
def prolific_decisions_send_run_task(job_id: int) -> None:
    prolific_decisions_send_run(job_id=job_id)


# acks_late: the claim takes a job once, and the pay call is guarded by the batch's stage (sent
# once, from CREATED): a second delivery, or a retry after a lost answer, only reconciles.
@shared_task(name="prolific.bonus_batch_pay_run", acks_late=True)
def bonus_batch_pay_run_task(job_id: int) -> None:
    bonus_batch_pay_run(job_id=job_id)


# acks_late: the claim takes a delivery once. A worker killed mid-job leaves it to be re-queued as
# stale; every action but "create" is safe to repeat (a transition Prolific already made is refused,
# places are set to a total, group members are ignored when already in), and "create" refuses a study
# that already has its Prolific id.
@shared_task(name="prolific.prolific_study_job_run", acks_late=True)
def prolific_study_job_run_task(job_id: int) -> None:
    prolific_study_job_run(job_id=job_id)


# acks_late: the claim takes a job once; recording a submission's status is ordered by its time (an
# older statement changes nothing), and reading a study again is safe to repeat.
@shared_task(name="prolific.prolific_webhook_process_run", acks_late=True)
def prolific_webhook_process_run_task(job_id: int) -> None:
    prolific_webhook_process_run(job_id=job_id)
