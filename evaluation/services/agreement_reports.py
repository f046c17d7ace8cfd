"""Agreement reports: parameters from a study, computing now, or queueing and running in the background.

A report is cached per (study, parameters) until the study's annotations change: a request
finds the newest report with the same parameters whose fingerprint matches the annotations
now, or one queued or still running, and queues a new one only when there is none.
"""

import hashlib
import json
import logging
import time
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Study
from evaluation.models import StudyReport
from evaluation.reports.agreement import ReportParameters, report_compute
from evaluation.reports.agreement_format import canonical, report_json
from evaluation.selectors.agreement_reports import annotations_fingerprint, study_data
from evaluation.stats.quality import Thresholds

logger = logging.getLogger(__name__)
STALE_AFTER = timedelta(minutes=30)  # a report "running" this long lost its worker
_PROGRESS_EVERY_SECONDS = 0.5
_UNSET = object()


def report_parameters(
    *, study: Study, language: str | None = None, subsample=_UNSET, seed: int = 0, resamples: int = 1000,
    exclude_flagged: bool = False, thresholds: Thresholds | None = None,
) -> ReportParameters:  # fmt: skip
    """Parameters with the study's defaults: subsample to its target annotations, its review thresholds."""
    if thresholds is None:
        thresholds = Thresholds(
            min_kappa=study.review_min_kappa,
            min_attention=study.review_min_attention,
            min_median_seconds=study.review_min_seconds_per_clip,
        )
    return ReportParameters(
        subsample=study.target_annotations if subsample is _UNSET else subsample,
        seed=seed,
        resamples=resamples,
        exclude_flagged=exclude_flagged,
        thresholds=thresholds,
        mismatch_threshold=study.mismatch_threshold,
        language=language or None,
    )


def parameters_from_dict(values: dict) -> ReportParameters:
    return ReportParameters(**{**values, "thresholds": Thresholds(**values["thresholds"])})


def parameters_key(parameters: ReportParameters) -> str:
    text = json.dumps(canonical(parameters.as_dict()), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def study_report_compute(*, study: Study, parameters: ReportParameters, progress=None) -> str:
    """The report's canonical JSON text, computed now in this process."""
    data = study_data(study=study, language=parameters.language)
    return report_json(report_compute(data, parameters, progress=progress))


def study_report_current(*, study: Study, parameters: ReportParameters) -> StudyReport | None:
    """The report to show: up to date and succeeded, or queued/running; None when one must be computed."""
    fingerprint = annotations_fingerprint(study=study)
    candidates = StudyReport.objects.filter(study=study, parameters_key=parameters_key(parameters))
    for report in candidates.exclude(status=StudyReport.Status.FAILED).order_by("-created_at", "-pk")[:5]:
        if report.status == StudyReport.Status.SUCCEEDED:
            if report.fingerprint == fingerprint:
                return report
            continue
        started = report.started_at or report.created_at
        if timezone.now() - started < STALE_AFTER:
            return report
    return None


def study_report_latest(*, study: Study, parameters: ReportParameters) -> StudyReport | None:
    """The newest report with these parameters, whatever its state (for showing a failure)."""
    return (
        StudyReport.objects.filter(study=study, parameters_key=parameters_key(parameters))
        .order_by("-created_at", "-pk")
        .first()
    )


def study_report_request(*, study: Study, parameters: ReportParameters, user=None) -> StudyReport:
    """The current report, or a new one queued for a worker once this transaction commits."""
    from evaluation.tasks import study_report_run_task

    current = study_report_current(study=study, parameters=parameters)
    if current is not None:
        return current
    report = StudyReport.objects.create(
        study=study,
        language=parameters.language or "",
        parameters=canonical(parameters.as_dict()),
        parameters_key=parameters_key(parameters),
        fingerprint=annotations_fingerprint(study=study),
        created_by=user if user is not None and user.is_authenticated else None,
    )
    transaction.on_commit(lambda: study_report_run_task.delay(report.pk))
    return report


def study_report_run(*, report_id: int) -> None:
    # The conditional update is the claim: a second delivery finds it taken.
    claimed = StudyReport.objects.filter(pk=report_id, status=StudyReport.Status.QUEUED).update(
        status=StudyReport.Status.RUNNING, phase="reading annotations", started_at=timezone.now()
    )
    if not claimed:
        return
    report = StudyReport.objects.select_related("study").get(pk=report_id)
    try:
        # Taken before reading: if annotations arrive meanwhile, the report looks stale, never fresh.
        fingerprint = annotations_fingerprint(study=report.study)
        text = study_report_compute(
            study=report.study, parameters=parameters_from_dict(report.parameters), progress=_progress_writer(report_id)
        )
    except Exception as error:  # the report must never stay "running" after a crash
        logger.exception("agreement report %s crashed", report_id)
        StudyReport.objects.filter(pk=report_id).update(
            status=StudyReport.Status.FAILED, error=f"internal error: {error}", phase="failed",
            finished_at=timezone.now(),
        )  # fmt: skip
        return
    StudyReport.objects.filter(pk=report_id).update(
        status=StudyReport.Status.SUCCEEDED, result_json=text, fingerprint=fingerprint, phase="finished",
        done=F("total"), finished_at=timezone.now(),
    )  # fmt: skip


def _progress_writer(report_id: int):
    last = {"at": 0.0}

    def write(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - last["at"] < _PROGRESS_EVERY_SECONDS and done + 1 < total:
            return
        last["at"] = now
        StudyReport.objects.filter(pk=report_id).update(phase=phase[:100], done=done, total=total)

    return write
