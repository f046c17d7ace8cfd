"""Prolific's webhooks in (issue 22): signed as Prolific documents it, taken once; a forged,
late or replayed one is refused and changes nothing; a RETURNED submission's clips are back in
the pool at once."""

import json
import time

import pytest
from django.urls import reverse

from annotation.models import StudyItem, Task
from annotation.services.assignment import assignment_claim
from prolific.models import ProlificSubmission, ProlificWebhookReceipt
from prolific.signature import prolific_signature
from tests.annotation.study_helpers import live_study, ready_participant
from tests.prolific_fake.fixtures import prolific_fake  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db
SECRET = "workspace-secret-of-the-test"
URL = "/prolific/webhooks/"


@pytest.fixture(autouse=True)
def secret(settings):
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET


def post(client, event: dict, *, secret=SECRET, at=None, event_id="evt-1", body=None):
    raw = body if body is not None else json.dumps(event).encode()
    timestamp = str(int(time.time() if at is None else at))
    return client.post(
        URL,
        data=raw,
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=prolific_signature(secret=secret, timestamp=timestamp, body=raw),
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
        HTTP_X_EVENT_ID=event_id,
    )


def returned(participant, status="RETURNED") -> dict:
    return {
        "resource_id": participant.prolific_session_id,
        "event_type": "submission.status.change",
        "participant_id": participant.prolific_pid,
        "status": status,
    }


@pytest.fixture
def holding():
    """A study whose every clip is reserved by one participant's open task (target 1)."""
    study = live_study(clips=3, clips_per_task=3, target_annotations=1)
    participant = ready_participant(study)
    task = assignment_claim(participant=participant)
    return study, participant, task


def pool(study) -> list[int]:
    return sorted(StudyItem.objects.filter(study=study).values_list("reserved_count", flat=True))


def test_the_url_is_the_documented_one():
    assert reverse("prolific:webhook") == URL


def test_a_returned_submission_gives_its_clips_back_at_once(client, holding):
    study, participant, task = holding
    assert pool(study) == [1, 1, 1]
    with pytest.raises(Exception, match="no clip left"):
        assignment_claim(participant=ready_participant(study))

    answer = post(client, returned(participant))

    assert answer.status_code == 200, answer.content
    assert answer.json()["detail"] == f"released task {task.pk}"
    task.refresh_from_db()
    assert task.status == Task.Status.EXPIRED and pool(study) == [0, 0, 0]
    record = ProlificSubmission.objects.get()
    assert (record.status, record.source, record.participant, record.released_task) == (
        "RETURNED",
        "webhook",
        participant,
        task.pk,
    )
    other = assignment_claim(participant=ready_participant(study))  # back in the pool: someone else takes them
    assert other.items.count() == 3


@pytest.mark.parametrize("status", ["TIMED-OUT", "REJECTED"])
def test_timed_out_and_rejected_release_too(client, holding, status):
    study, participant, _task = holding
    assert post(client, returned(participant, status)).status_code == 200
    assert pool(study) == [0, 0, 0]


def test_an_active_or_awaiting_review_submission_keeps_its_clips(client, holding):
    study, participant, _task = holding
    assert post(client, returned(participant, "AWAITING REVIEW")).json()["detail"] == "submission status recorded"
    assert pool(study) == [1, 1, 1]


def assert_nothing_changed(study, task):
    task.refresh_from_db()
    assert task.status == Task.Status.OPEN and pool(study) == [1, 1, 1]
    assert not ProlificSubmission.objects.exists() and not ProlificWebhookReceipt.objects.exists()


def test_a_forged_webhook_is_refused_and_changes_nothing(client, holding):
    study, participant, task = holding
    answer = post(client, returned(participant), secret="not-the-workspace-secret")
    assert answer.status_code == 401 and answer.json()["detail"] == "refused: the signature does not match"
    assert_nothing_changed(study, task)


def test_a_body_changed_after_signing_is_refused(client, holding):
    study, participant, task = holding
    raw = json.dumps(returned(participant, "AWAITING REVIEW")).encode()
    timestamp = str(int(time.time()))
    answer = client.post(
        URL,
        data=json.dumps(returned(participant)).encode(),
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=prolific_signature(secret=SECRET, timestamp=timestamp, body=raw),
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
    )
    assert answer.status_code == 401
    assert_nothing_changed(study, task)


def test_an_unsigned_webhook_is_refused(client, holding):
    study, participant, task = holding
    answer = client.post(URL, data=json.dumps(returned(participant)), content_type="application/json")
    assert answer.status_code == 401 and "missing X-Prolific-Request-Signature" in answer.json()["detail"]
    assert_nothing_changed(study, task)


def test_a_webhook_signed_outside_the_window_is_refused(client, holding, settings):
    study, participant, task = holding
    settings.PROLIFIC_WEBHOOK_TOLERANCE_SECONDS = 300
    answer = post(client, returned(participant), at=time.time() - 301)
    assert answer.status_code == 401 and "outside the 300 s window" in answer.json()["detail"]
    assert post(client, returned(participant), at=time.time() + 301).status_code == 401  # from the future too
    assert_nothing_changed(study, task)


def test_a_replayed_webhook_is_refused_and_changes_nothing(client, holding):
    _study, participant, _task = holding
    signed_at = time.time()
    assert post(client, returned(participant, "ACTIVE"), at=signed_at, event_id="evt-a").status_code == 200
    record = ProlificSubmission.objects.get()
    # Prolific then says RETURNED (a newer statement); the task is released.
    assert post(client, returned(participant), at=signed_at + 2, event_id="evt-b").status_code == 200
    before = ProlificSubmission.objects.get()
    assert before.status == "RETURNED"

    replay = post(client, returned(participant, "ACTIVE"), at=signed_at, event_id="evt-a")  # the same bytes again

    assert replay.status_code == 409 and replay.json()["detail"] == "refused: a replay of a webhook received already"
    after = ProlificSubmission.objects.get()
    assert (after.status, after.status_at, after.updated_at) == ("RETURNED", before.status_at, before.updated_at)
    assert ProlificWebhookReceipt.objects.count() == 2 and record.pk == after.pk


def test_a_redelivery_with_the_same_event_id_is_acknowledged_and_changes_nothing(client, holding):
    _study, participant, _task = holding
    assert post(client, returned(participant), at=time.time() - 5, event_id="evt-1").status_code == 200
    before = ProlificSubmission.objects.get()

    again = post(client, returned(participant), event_id="evt-1")  # newly signed: Prolific retrying

    assert again.status_code == 200 and again.json()["detail"] == "already received: nothing done again"
    assert ProlificWebhookReceipt.objects.count() == 1
    assert ProlificSubmission.objects.get().updated_at == before.updated_at


def test_an_older_statement_than_the_one_known_changes_nothing(client, holding):
    study, participant, _task = holding
    now = time.time()
    assert post(client, returned(participant, "AWAITING REVIEW"), at=now, event_id="evt-new").status_code == 200
    late = post(client, returned(participant), at=now - 60, event_id="evt-old")  # sent earlier, arrived later
    assert late.status_code == 200
    assert ProlificSubmission.objects.get().status == "AWAITING REVIEW" and pool(study) == [1, 1, 1]


def test_a_signed_body_that_is_not_an_event_is_refused(client, holding):
    study, _participant, task = holding
    answer = post(client, {}, body=b"[1, 2]")
    assert answer.status_code == 400
    assert_nothing_changed(study, task)


def test_without_any_secret_every_webhook_is_refused(client, holding, settings):
    study, participant, task = holding
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    answer = post(client, returned(participant))
    assert answer.status_code == 401 and "no webhook secret is configured" in answer.json()["detail"]
    assert_nothing_changed(study, task)


def test_a_study_status_change_is_recorded(client, holding):
    event = {"resource_id": "study-1", "event_type": "study.status.change", "metadata": {}, "status": "PAUSED"}
    answer = post(client, event)
    assert answer.status_code == 200
    assert answer.json()["detail"] == "study status recorded: no study of ours runs as it"
    assert ProlificWebhookReceipt.objects.get().status == "PAUSED"


def test_a_study_status_change_makes_ours_follow_prolific(client, prolific_fake, settings):  # noqa: F811
    from annotation.models import Study
    from prolific.services import studies as service
    from tests.prolific.test_studies import created, english_study

    prolific_study = created(english_study(), settings)
    service.prolific_study_act(prolific_study=prolific_study, action="publish")
    prolific_fake.state["studies"][prolific_study.prolific_id]["status"] = "PAUSED"  # paused in Prolific's app
    event = {"resource_id": prolific_study.prolific_id, "event_type": "study.status.change", "status": "PAUSED"}

    answer = post(client, event)

    assert answer.status_code == 200 and answer.json()["detail"].endswith("follows Prolific: PAUSED")
    prolific_study.refresh_from_db()
    assert prolific_study.status == "PAUSED" and prolific_study.study.status == Study.Status.PAUSED


def test_a_study_status_change_without_an_api_token_is_kept_and_answered_2xx(
    client,
    prolific_fake,  # noqa: F811
    settings,
    caplog,
):
    from tests.prolific.test_studies import created, english_study

    prolific_study = created(english_study(), settings)
    settings.PROLIFIC_API_TOKEN = ""  # the token is gone: prolific_study_sync cannot read the study
    event = {"resource_id": prolific_study.prolific_id, "event_type": "study.status.change", "status": "PAUSED"}

    with caplog.at_level("WARNING", logger="prolific.services.webhooks"):
        answer = post(client, event)

    assert answer.status_code == 200, answer.content
    assert "PROLIFIC_API_TOKEN is not set" in answer.json()["detail"]
    receipt = ProlificWebhookReceipt.objects.get()
    assert receipt.status == "PAUSED" and "PROLIFIC_API_TOKEN is not set" in receipt.outcome
    assert "PROLIFIC_API_TOKEN is not set" in caplog.text
