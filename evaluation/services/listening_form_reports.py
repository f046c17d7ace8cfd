"""Listening-form reports: the current one of a study, or one queued and run in the background.

A report is kept until the study's answers change (form_answers_fingerprint): a request finds the
newest report that is up to date, or one queued or still running, and queues a new one only when
there is none. A report that failed for the same answers is handed back as it is, not queued
again, so that a page which requests on every visit does not start a failing computation over
and over; `retry_failed=True` (the page's "try again") queues a new one.
"""

from annotation.jobs import job_enqueue, job_refresh, job_run
from annotation.models import Study
from evaluation.models import ListeningFormReport
from evaluation.reports.agreement_format import report_json
from evaluation.selectors.listening_form_reports import form_answers_fingerprint, form_study_report

Status = ListeningFormReport.Status


def form_report_request(*, study: Study, user=None, retry_failed: bool = False) -> ListeningFormReport:
    """The up-to-date, queued or running report; else the failed one for these answers (unless
    `retry_failed`); else a new one, queued for a worker once this transaction commits."""
    fingerprint = form_answers_fingerprint(study=study)
    for report in ListeningFormReport.objects.filter(study=study).exclude(status=Status.FAILED)[:5]:
        report = job_refresh(report)
        if report.status == Status.SUCCEEDED and report.fingerprint == fingerprint:
            return report
        if not report.finished:
            return report
    latest = ListeningFormReport.objects.filter(study=study).first()
    failed_for_these_answers = (
        latest is not None and latest.status == Status.FAILED and latest.fingerprint == fingerprint
    )
    if failed_for_these_answers and not retry_failed:
        return latest
    report = ListeningFormReport.objects.create(
        study=study, fingerprint=fingerprint, created_by=user if user is not None and user.is_authenticated else None
    )
    job_enqueue(report)
    return report


def form_report_run(*, report_id: int) -> None:
    job_run(model=ListeningFormReport, job_id=report_id, work=_compute)


def _compute(report: ListeningFormReport, progress) -> dict:
    progress("reading answers", 0, 2)
    # Taken before reading: if answers arrive meanwhile, the report looks stale, never fresh.
    fingerprint = form_answers_fingerprint(study=report.study)
    scores = form_study_report(study=report.study)
    progress("writing the report", 1, 2)
    return {"result_json": report_json(scores), "fingerprint": fingerprint}
