"""Suite reports: a benchmark suite's scores, systems beside the humans, computed in the background.

A report is kept until its inputs change (evaluation.selectors.suites.suite_fingerprint); it is
asked for the one way every computed report is (evaluation.services.cached_reports). The scoring
itself is pure (evaluation.stats.suites); this module only wires the database to it.
"""

from collections.abc import Callable

from annotation.models import Study
from annotation.refusals import Refused
from annotation.shared.jobs import JobFailed, job_run
from evaluation.models import CastSet, SuiteReport
from evaluation.reports.agreement_format import report_json
from evaluation.selectors import suites as inputs
from evaluation.services.cached_reports import cached_report_request, requesting_user
from evaluation.stats.listening_forms import choice_scores, stance_scores, stressed_word_scores
from evaluation.stats.suites import cast, stance, stresstest

Suite = SuiteReport.Suite
DEFAULT_RESAMPLES = 1000
MAX_RESAMPLES = 20000


class SuiteRefused(Refused, ValueError):
    """The study or set cannot carry this suite; the message says why."""


def suite_report_request(
    *,
    suite: str,
    study: Study | None = None,
    cast_set: CastSet | None = None,
    user=None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    retry_failed: bool = False,
) -> SuiteReport:
    """The up-to-date, queued or running report of these parameters; else a new one, queued."""
    _check_subject(suite, study, cast_set)
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise SuiteRefused(f"resamples must be between 1 and {MAX_RESAMPLES}, not {resamples}")
    fingerprint = inputs.suite_fingerprint(suite=suite, study=study, cast_set=cast_set)
    subject = {"suite": suite, "study": study, "cast_set": cast_set, "resamples": resamples, "seed": seed}
    return cached_report_request(
        reports=SuiteReport.objects.filter(**subject),
        fingerprint=fingerprint,
        create=lambda: SuiteReport.objects.create(**subject, fingerprint=fingerprint, created_by=requesting_user(user)),
        retry_failed=retry_failed,
    )


def _check_subject(suite: str, study: Study | None, cast_set: CastSet | None) -> None:
    if suite not in Suite.values:
        raise SuiteRefused(f"unknown suite {suite!r}; the suites are {', '.join(Suite.values)}")
    if suite == Suite.CAST:
        if cast_set is None or study is not None:
            raise SuiteRefused("a CAST report is of a CAST set")
        return
    if study is None or cast_set is not None:
        raise SuiteRefused(f"a {suite} report is of a listening-form study")
    if not study.capabilities.answers_are_choices:
        raise SuiteRefused(f"{study.name} is not a listening-form study")


def suite_report_run(*, report_id: int) -> None:
    job_run(model=SuiteReport, job_id=report_id, work=_compute)


def _compute(report: SuiteReport, progress) -> dict:
    progress("reading the inputs", 0, 2)
    # Taken before reading: if inputs change meanwhile, the report looks stale, never fresh.
    fingerprint = inputs.suite_fingerprint(suite=report.suite, study=report.study, cast_set=report.cast_set)
    reports: dict[Suite, Callable[..., dict]] = {
        Suite.STRESSTEST: stresstest_report,
        Suite.STANCE: stance_report,
        Suite.CAST: cast_report,
    }
    compute = reports[Suite(report.suite)]
    subject: dict[str, object] = (
        {"cast_set": report.cast_set} if report.suite == Suite.CAST else {"study": report.study}
    )
    try:
        scores = compute(**subject, resamples=report.resamples, seed=report.seed)
    except ValueError as error:  # inputs the scoring cannot take, named by it
        raise JobFailed(str(error)) from error
    progress("writing the report", 1, 2)
    return {"result_json": report_json(scores), "fingerprint": fingerprint}


def _study_summary(study: Study) -> dict:
    return {"id": study.pk, "name": study.name, "slug": study.slug}


def stresstest_report(*, study: Study, resamples: int, seed: int) -> dict:
    """SSR and SSD of every system and of the listeners, on the same items. A system is scored on
    the task(s) it answered: a detector's stressed words are SSD only."""
    data = inputs.stresstest_inputs(study=study)
    humans = data["humans"]
    human_ssr = choice_scores(humans["ssr"], by=["category"])
    systems = {
        system.name: {
            "system": inputs.system_summary(system),
            "ssr": stresstest.system_ssr(items["ssr"]) if items["ssr"] is not None else None,
            "ssd": stresstest.system_ssd(items["ssd"]) if items["ssd"] is not None else None,
        }
        for system, items in data["systems"]
    }
    answered_ssr = {name: system["ssr"] for name, system in systems.items() if system["ssr"] is not None}
    return {
        "suite": Suite.STRESSTEST,
        "study": _study_summary(study),
        "humans": {"ssr": human_ssr, "ssd": stressed_word_scores(humans["ssd"]) if humans["ssd"] else None},
        "systems": systems,
        "table": stresstest.comparison_table(human=human_ssr, systems=answered_ssr),
    }


def stance_report(*, study: Study, resamples: int, seed: int) -> dict:
    """Every judge per dimension: failures, pole-order disagreement, AUROC, EER, Spearman against
    the listeners' consensus; and the listeners' own scores, one table per dimension."""
    data = inputs.stance_inputs(study=study)
    humans = stance_scores(data["humans"]) if data["humans"] else None
    judges = {
        system.name: {
            "system": inputs.system_summary(system),
            "scores": stance.judge_scores(instances, resamples=resamples, seed=seed),
        }
        for system, instances in data["judges"]
    }
    table = stance.comparison_table(
        judges={name: judge["scores"] for name, judge in judges.items()},
        human=humans,
        weak_labels=data["weak_labels"],
        resamples=resamples,
        seed=seed,
    )
    return {
        "suite": Suite.STANCE,
        "study": _study_summary(study),
        "resamples": resamples,
        "seed": seed,
        "humans": humans,
        "judges": judges,
        "tables": table,
    }


def cast_report(*, cast_set: CastSet, resamples: int, seed: int) -> dict:
    """Hit, Pair-Contrast and Pair-Correct per system, mode and source of stressed words, and the
    agreement between each detector and each listener study on the same renditions."""
    data = inputs.cast_inputs(cast_set=cast_set)
    groups = [
        {
            "system": group["system"]["name"],
            "mode": group["mode"],
            "source": group["source"],
            **cast.pair_scores(group["pairs"], resamples=resamples, seed=seed),
        }
        for group in data["groups"]
    ]
    labels = data["labels"]
    detectors = [source for source in labels if not source.startswith(inputs.HUMANS_PREFIX)]
    listeners = [source for source in labels if source.startswith(inputs.HUMANS_PREFIX)]
    agreement = [
        {
            "detector": detector,
            "listeners": listener,
            **cast.detector_human_kappa(labels[detector], labels[listener], resamples=resamples, seed=seed),
        }
        for detector in detectors
        for listener in listeners
    ]
    return {
        "suite": Suite.CAST,
        "cast_set": {"id": cast_set.pk, "name": cast_set.name},
        "resamples": resamples,
        "seed": seed,
        "items": data["items"],
        "renditions": data["renditions"],
        "sources": data["sources"],
        "groups": groups,
        "detector_vs_listeners": agreement,
    }
