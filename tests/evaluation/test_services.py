"""Reports computed in the background, claimed once, cached until annotations change."""

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.models import AgreementReport
from evaluation.services import agreement_reports as services
from evaluation.services.agreement_reports import (
    agreement_report_compute,
    agreement_report_current,
    agreement_report_request,
    agreement_report_run,
    parameters_from_dict,
    report_parameters,
)
from tests.annotation.factories import AnnotationFactory, TaskFactory, TaskItemFactory
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return golden_study()


def parameters(study, **kwargs):
    return report_parameters(study=study, resamples=50, **kwargs)


def test_defaults_come_from_the_study(study):
    defaults = report_parameters(study=study)

    # Every usable annotation, not a subsample to the target (issue 33).
    assert (defaults.subsample, defaults.seed, defaults.resamples) == (None, 0, 1000)
    assert (defaults.thresholds.min_kappa, defaults.thresholds.min_attention) == (0.1, 1.0)
    assert defaults.thresholds.min_time_ratio == 1.0 and defaults.mismatch_threshold == study.mismatch_threshold
    assert defaults.thresholds.min_median_seconds is None  # the absolute rule is off unless asked for
    assert parameters_from_dict(defaults.as_dict()) == defaults


def test_a_request_queues_after_commit_and_the_worker_stores_the_json(study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        report = agreement_report_request(study=study, parameters=parameters(study))
    assert report.status == AgreementReport.Status.QUEUED and len(callbacks) == 1

    callbacks[0]()  # the eager task runs here, as a worker would after the commit

    report.refresh_from_db()
    assert report.status == AgreementReport.Status.SUCCEEDED
    assert report.result_json == agreement_report_compute(study=study, parameters=parameters(study))
    assert report.done == report.total > 0 and report.phase == "finished"
    assert report.started_at and report.finished_at


def test_the_cached_report_is_reused_until_a_new_annotation_arrives(study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        first = agreement_report_request(study=study, parameters=parameters(study))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        again = agreement_report_request(study=study, parameters=parameters(study))
    assert again.pk == first.pk and callbacks == []

    other = agreement_report_request(study=study, parameters=parameters(study, seed=5))
    assert other.pk != first.pk  # other parameters, another report

    participant = study.participants.order_by("pk").first()
    AnnotationFactory(item=TaskItemFactory(task=TaskFactory(participant=participant), clip=study.items.first().clip))
    assert agreement_report_current(study=study, parameters=parameters(study)) is None
    with django_capture_on_commit_callbacks(execute=True):
        fresh = agreement_report_request(study=study, parameters=parameters(study))
    assert fresh.pk not in (first.pk, other.pk)


def test_a_report_is_claimed_once(study, django_capture_on_commit_callbacks, monkeypatch):
    with django_capture_on_commit_callbacks(execute=True):
        report = agreement_report_request(study=study, parameters=parameters(study))
    calls = []
    monkeypatch.setattr(services, "agreement_report_compute", lambda **kwargs: calls.append(kwargs))

    agreement_report_run(report_id=report.pk)  # a second delivery of the same task

    assert calls == []


def test_a_crash_fails_the_report_and_a_new_request_tries_again(study, django_capture_on_commit_callbacks, monkeypatch):
    def crash(**kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(services, "agreement_report_compute", crash)
    with django_capture_on_commit_callbacks(execute=True):
        report = agreement_report_request(study=study, parameters=parameters(study))
    report.refresh_from_db()
    assert (report.status, report.error) == (AgreementReport.Status.FAILED, "internal error: disk full")

    assert agreement_report_current(study=study, parameters=parameters(study)) is None


def test_a_report_whose_worker_went_silent_is_queued_again(study, django_capture_on_commit_callbacks):
    report = agreement_report_request(study=study, parameters=parameters(study))
    AgreementReport.objects.filter(pk=report.pk).update(
        status=AgreementReport.Status.RUNNING, heartbeat_at=timezone.now(), attempts=1
    )
    assert agreement_report_current(study=study, parameters=parameters(study)).pk == report.pk

    silent_since = timezone.now() - AgreementReport.STALE_AFTER - timedelta(seconds=1)
    AgreementReport.objects.filter(pk=report.pk).update(heartbeat_at=silent_since)
    with django_capture_on_commit_callbacks(execute=True):
        current = agreement_report_current(study=study, parameters=parameters(study))

    assert current.pk == report.pk  # the same report, run again by the (eager) worker
    current.refresh_from_db()
    assert (current.status, current.attempts) == (AgreementReport.Status.SUCCEEDED, 2)


def test_a_language_report_covers_that_language_only(study):
    text = agreement_report_compute(study=study, parameters=parameters(study, language="de"))

    assert '"language": "de"' in text and '"zh"' not in text
