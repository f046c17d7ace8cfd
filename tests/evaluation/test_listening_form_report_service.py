"""Listening-form scores computed in the background, kept until the answers change."""

import pytest

from annotation.models import ListeningFormItem, Participant
from evaluation.models import ListeningFormReport
from evaluation.reports.agreement_format import report_json
from evaluation.selectors.listening_form_reports import listening_form_answers_fingerprint, listening_form_report_data
from evaluation.services import listening_form_reports as services
from evaluation.services.listening_form_reports import listening_form_report_request
from tests.annotation.study_helpers import live_form
from tests.evaluation.test_listening_form_report_page import answer_every_type, every_type, take_form

pytestmark = pytest.mark.django_db
Status = ListeningFormReport.Status


@pytest.fixture
def study():
    form = live_form(specs=every_type, target_annotations=3)
    take_form(form, answer_every_type)
    return form


def computed(study, capture) -> ListeningFormReport:
    with capture(execute=True):
        job = listening_form_report_request(study=study)
    job.refresh_from_db()
    return job


def test_a_request_queues_after_commit_and_the_worker_stores_the_canonical_json(
    study, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = listening_form_report_request(study=study)
    assert job.status == Status.QUEUED and len(callbacks) == 1

    callbacks[0]()  # the eager task runs here, as a worker would after the commit

    job.refresh_from_db()
    assert (job.status, job.phase, job.done, job.total) == (Status.SUCCEEDED, "finished", 2, 2)
    assert job.result_json == report_json(listening_form_report_data(study=study))
    assert job.fingerprint == listening_form_answers_fingerprint(study=study)


def test_the_scores_are_reused_until_an_answer_arrives(study, django_capture_on_commit_callbacks):
    first = computed(study, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        again = listening_form_report_request(study=study)
    assert again.pk == first.pk and callbacks == []

    take_form(study, answer_every_type)
    fresh = computed(study, django_capture_on_commit_callbacks)

    assert fresh.pk != first.pk and fresh.status == Status.SUCCEEDED
    assert '"answers": 10' in fresh.result_json and '"answers": 5' in first.result_json


@pytest.mark.parametrize(
    "change",
    [
        lambda study: Participant.objects.filter(study=study).update(decision=Participant.Decision.REJECTED),
        lambda study: ListeningFormItem.objects.filter(study=study, external_id="choice").update(gold=0),
        lambda study: ListeningFormItem.objects.filter(study=study, external_id="mos").update(
            metadata={"system": "tts-b"}
        ),
    ],
    ids=["a participant rejected", "a gold answer corrected", "an item's metadata edited"],
)
def test_whatever_the_scores_read_makes_them_stale(study, django_capture_on_commit_callbacks, change):
    first = computed(study, django_capture_on_commit_callbacks)

    change(study)

    assert listening_form_answers_fingerprint(study=study) != first.fingerprint
    assert computed(study, django_capture_on_commit_callbacks).pk != first.pk


def test_a_job_under_way_is_handed_back_not_queued_twice(study):
    queued = listening_form_report_request(study=study)
    ListeningFormReport.objects.filter(pk=queued.pk).update(status=Status.RUNNING)

    assert listening_form_report_request(study=study).pk == queued.pk
    assert ListeningFormReport.objects.count() == 1


def test_a_crash_fails_the_job_and_is_not_retried_for_the_same_answers(
    study, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(services, "listening_form_report_data", lambda *, study: {"bad": float("nan")})
    failed = computed(study, django_capture_on_commit_callbacks)
    assert failed.status == Status.FAILED and failed.error.startswith("internal error: a report cannot hold nan")
    assert failed.result_json == ""

    assert listening_form_report_request(study=study).pk == failed.pk  # a page visit does not start it over
    retried = listening_form_report_request(study=study, retry_failed=True)
    assert retried.pk != failed.pk and retried.status == Status.QUEUED


def test_new_answers_after_a_failure_queue_a_new_job(study, django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setattr(services, "listening_form_report_data", lambda *, study: 1 / 0)
    failed = computed(study, django_capture_on_commit_callbacks)
    monkeypatch.undo()

    take_form(study, answer_every_type)

    assert computed(study, django_capture_on_commit_callbacks).status == Status.SUCCEEDED
    assert ListeningFormReport.objects.exclude(pk=failed.pk).count() == 1
