"""Listening-form reports: the current one of a study, or one queued and run in the background.

A report is kept until the study's answers change (listening_form_answers_fingerprint); it is asked for
the one way every computed report is (evaluation.services.cached_reports).
"""

from annotation.models import Study
from annotation.shared.jobs import job_run
from evaluation.models import ListeningFormReport
from evaluation.reports.agreement_format import report_json
from evaluation.selectors.listening_form_reports import listening_form_answers_fingerprint, listening_form_report_data
from evaluation.services.cached_reports import cached_report_request, requesting_user


def listening_form_report_request(*, study: Study, user=None, retry_failed: bool = False) -> ListeningFormReport:
    """The up-to-date, queued or running report; else the failed one for these answers (unless
    `retry_failed`); else a new one, queued for a worker once this transaction commits."""
    fingerprint = listening_form_answers_fingerprint(study=study)
    return cached_report_request(
        reports=ListeningFormReport.objects.filter(study=study),
        fingerprint=fingerprint,
        create=lambda: ListeningFormReport.objects.create(
            study=study, fingerprint=fingerprint, created_by=requesting_user(user)
        ),
        retry_failed=retry_failed,
    )


def listening_form_report_run(*, report_id: int) -> None:
    job_run(model=ListeningFormReport, job_id=report_id, work=_compute)


def _compute(report: ListeningFormReport, progress) -> dict:
    progress("reading answers", 0, 2)
    # Taken before reading: if answers arrive meanwhile, the report looks stale, never fresh.
    fingerprint = listening_form_answers_fingerprint(study=report.study)
    scores = listening_form_report_data(study=report.study)
    progress("writing the report", 1, 2)
    return {"result_json": report_json(scores), "fingerprint": fingerprint}
