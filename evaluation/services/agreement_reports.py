"""Agreement reports: parameters from a study, computing now, or queueing and running in the background.

A report is cached per (study, parameters) until the study's annotations change (an adaptive
study's: or its design's settings or fitted model, report_fingerprint): a request
finds the newest report with the same parameters whose fingerprint matches the annotations
now, or one queued or still running, and queues a new one only when there is none.
"""

import hashlib
import json
import logging
from functools import partial

from annotation.models import HeadphoneTrial, Study
from annotation.participant_names import opaque_annotator_id
from annotation.selectors.headphone_results import headphone_results, participant_headphone_results
from annotation.selectors.study_data import annotations_fingerprint, study_data, study_thresholds
from annotation.shared.jobs import job_enqueue, job_refresh, job_run
from evaluation.models import AgreementReport
from evaluation.reports.agreement import ReportParameters, report_compute
from evaluation.reports.agreement_format import canonical, report_json
from evaluation.reports.group_agreement import group_agreement
from evaluation.services.adaptive_disclosures import adaptive_settings, study_adaptive_disclosure
from evaluation.stats.quality import Thresholds
from evaluation.stats.selection import select_annotations

logger = logging.getLogger(__name__)
_UNSET = object()


def report_parameters(
    *,
    study: Study,
    language: str | None = None,
    subsample=_UNSET,
    seed: int = 0,
    resamples: int = 1000,
    exclude_flagged: bool = False,
    thresholds: Thresholds | None = None,
) -> ReportParameters:
    """Parameters with the study's defaults: every usable annotation (no subsample), its review
    thresholds. ValueError (the reason) for parameters a report cannot take."""
    if thresholds is None:
        thresholds = study_thresholds(study=study)
    if subsample is _UNSET:
        subsample = default_subsample(study)
    return ReportParameters(
        subsample=subsample,
        seed=seed,
        resamples=resamples,
        exclude_flagged=exclude_flagged,
        thresholds=thresholds,
        mismatch_threshold=study.mismatch_threshold,
        language=language or None,
    )


def default_subsample(study: Study) -> int | None:
    """The annotations per clip a report (and a label set) of the study takes by default: every
    usable one (None). A subsample to the target left out every clip that rejected or excluded work
    had left below it (17 of 20 clips in issue 33's study), and a target of 1 made no report at
    all; a subsample is the researcher's choice, and the report says what it removed."""
    return None


def parameters_from_dict(values: dict) -> ReportParameters:
    return ReportParameters(**{**values, "thresholds": Thresholds(**values["thresholds"])})


def parameters_key(parameters: ReportParameters) -> str:
    text = json.dumps(canonical(parameters.as_dict()), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def agreement_report_compute(*, study: Study, parameters: ReportParameters, progress=None) -> str:
    """The report's canonical JSON text, computed now in this process. Annotators are named by
    their opaque id, as in the study's label sets and exports; never by Prolific id."""
    data = study_data(study=study, language=parameters.language)
    name = partial(opaque_annotator_id, study.slug)
    if not _has_headphone_check(study):
        report = report_compute(data, parameters, progress=progress, annotator_name=name)
    else:
        # The groups' agreement needs the report's own selection of annotations: chosen once, for both.
        selection = select_annotations(
            data,
            thresholds=parameters.thresholds,
            exclude_flagged=parameters.exclude_flagged,
            n=parameters.subsample,
            seed=parameters.seed,
        )
        report = report_compute(data, parameters, progress=progress, selection=selection, annotator_name=name)
        report["headphone_check"] = _headphone_section(study, data, selection, parameters)
    if study.is_adaptive:  # a section of its own; a fixed study's report is unchanged
        report["adaptive_design"] = study_adaptive_disclosure(study=study, data=data)
    return report_json(report)


def _has_headphone_check(study: Study) -> bool:
    return (
        study.headphone_check != Study.HeadphoneCheck.NONE
        or HeadphoneTrial.objects.filter(participant__study=study).exists()
    )


def _headphone_section(study: Study, data, selection, parameters: ReportParameters) -> dict:
    """The headphone check's results when the report was computed, and agreement within groups of
    annotators: all of them, those who passed the check, those who failed it (a study that only
    records the result), and by their answer to the self-reported headphone question."""
    people = participant_headphone_results(study=study)
    results = headphone_results(study=study, people=people)
    groups = [("all", "all annotators", [person.annotator_key for person in people])]
    groups.append(("passed", "passed the check", [p.annotator_key for p in people if p.passed is True]))
    groups.append(("failed", "failed the check", [p.annotator_key for p in people if p.passed is False]))
    if results["self_report"] is not None:
        for row in results["self_report"]["rows"]:
            answer = row["answer"]
            keys = [person.annotator_key for person in people if person.self_report == answer]
            groups.append((f"self_report:{answer}", f"answered “{answer}” to the headphone question", keys))
    annotated = set(data.annotator_keys)
    groups = [group for group in groups if group[0] == "all" or annotated.intersection(group[2])]
    return {"results": results, "agreement_by_group": group_agreement(data, selection, parameters, groups)}


def report_fingerprint(*, study: Study) -> str:
    """What a cached report reflects: the annotations and, for an adaptive study, the design's
    settings and its fitted model, which a background refit changes with no new annotation."""
    fingerprint = annotations_fingerprint(study=study)
    if not study.is_adaptive:
        return fingerprint
    settings = json.dumps({"mode": study.adaptive_mode, **adaptive_settings(study)}, sort_keys=True)
    return f"{fingerprint};adaptive={hashlib.sha256(settings.encode()).hexdigest()[:16]}"


def agreement_report_current(*, study: Study, parameters: ReportParameters) -> AgreementReport | None:
    """The report to show: up to date and succeeded, or queued/running; None when one must be computed."""
    fingerprint = report_fingerprint(study=study)
    candidates = AgreementReport.objects.filter(study=study, parameters_key=parameters_key(parameters))
    for report in candidates.exclude(status=AgreementReport.Status.FAILED).order_by("-created_at", "-pk")[:5]:
        report = job_refresh(report)
        if report.status == AgreementReport.Status.SUCCEEDED:
            if report.fingerprint == fingerprint:
                return report
        elif report.status != AgreementReport.Status.FAILED:
            return report
    return None


def agreement_report_latest(*, study: Study, parameters: ReportParameters) -> AgreementReport | None:
    """The newest report with these parameters, whatever its state (for showing a failure)."""
    return (
        AgreementReport.objects.filter(study=study, parameters_key=parameters_key(parameters))
        .order_by("-created_at", "-pk")
        .first()
    )


def agreement_report_request(*, study: Study, parameters: ReportParameters, user=None) -> AgreementReport:
    """The current report, or a new one queued for a worker once this transaction commits."""
    current = agreement_report_current(study=study, parameters=parameters)
    if current is not None:
        return current
    report = AgreementReport.objects.create(
        study=study,
        language=parameters.language or "",
        parameters=canonical(parameters.as_dict()),
        parameters_key=parameters_key(parameters),
        fingerprint=report_fingerprint(study=study),
        created_by=user if user is not None and user.is_authenticated else None,
    )
    job_enqueue(report)
    return report


def agreement_report_run(*, report_id: int) -> None:
    job_run(model=AgreementReport, job_id=report_id, work=_compute)


def _compute(report: AgreementReport, progress) -> dict:
    progress("reading annotations", 0, 0)
    # Taken before reading: if annotations arrive meanwhile, the report looks stale, never fresh.
    fingerprint = report_fingerprint(study=report.study)
    parameters = parameters_from_dict(report.parameters)
    text = agreement_report_compute(study=report.study, parameters=parameters, progress=progress)
    return {"result_json": text, "fingerprint": fingerprint}
