from celery import shared_task

from evaluation.services.agreement_reports import study_report_run


@shared_task(acks_late=True)  # idempotent: annotation.jobs claims each job once
def study_report_run_task(report_id: int) -> None:
    study_report_run(report_id=report_id)
