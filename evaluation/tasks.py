from celery import shared_task

from evaluation.services.agreement_reports import agreement_report_run
from evaluation.services.dataset_exports import dataset_export_run
from evaluation.services.label_sets import label_set_build
from evaluation.services.listening_form_reports import listening_form_report_run
from evaluation.services.suite_reports import suite_report_run


@shared_task(
    name="evaluation.agreement_report_run", acks_late=True
)  # idempotent: annotation.shared.jobs claims each job once
def agreement_report_run_task(report_id: int) -> None:
    agreement_report_run(report_id=report_id)


@shared_task(
    name="evaluation.listening_form_report_run", acks_late=True
)  # idempotent: annotation.shared.jobs claims each job once
def listening_form_report_run_task(report_id: int) -> None:
    listening_form_report_run(report_id=report_id)


@shared_task(
    name="evaluation.label_set_build", acks_late=True
)  # idempotent: annotation.shared.jobs claims each job once
def label_set_build_task(label_set_id: int) -> None:
    label_set_build(label_set_id=label_set_id)


@shared_task(
    name="evaluation.dataset_export_run", acks_late=True
)  # idempotent: annotation.shared.jobs claims each job once
def dataset_export_run_task(export_id: int) -> None:
    dataset_export_run(export_id=export_id)


@shared_task(
    name="evaluation.suite_report_run", acks_late=True
)  # idempotent: annotation.shared.jobs claims each job once
def suite_report_run_task(report_id: int) -> None:
    suite_report_run(report_id=report_id)
