"""Prolific's webhooks in, as Prolific delivers them (issues 22 and 30; tests/prolific_fake/rules.py:
WEBHOOK_SIGNATURE, WEBHOOK_EVENT_ID, WEBHOOK_ORDER, WEBHOOK_RETRIES): signed, at least once, each event
with one X-Event-ID on every delivery and the X-Timestamp of when it was sent, in no guaranteed order.
A forged one is refused and changes nothing; a repeat is acknowledged with 200 and acts no twice,
whatever its signature and age; events are ordered by X-Timestamp; the request stores the event and
answers at once, and a job acts on it (a RETURNED submission's clips back in the pool); input no
event has (a 200-character X-Event-ID, JSON nested 100,000 deep) is a 400 naming it, nothing written.

Jobs run eagerly once the request's transaction commits (`received` runs them; `answered_only`
leaves them queued, to look at the request alone)."""

import json
import time

import pytest
from django.urls import reverse

from annotation.models import StudyItem, Task
from annotation.services.assignment import assignment_claim
from prolific.models import ProlificSubmission, ProlificWebhookJob, ProlificWebhookReceipt
from prolific.signature import prolific_signature
from tests.annotation.study_helpers import live_study, ready_participant

pytestmark = pytest.mark.django_db
SECRET = "workspace-secret-of-the-test"
URL = "/prolific/webhooks/"


@pytest.fixture(autouse=True)
def secret(settings):
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET


def post(client, event: dict, *, secret=SECRET, at=None, event_id="evt-1", sent=None, body=None, signature=None):
    """One delivery: signed at `at` (now), the event sent at `sent` (X-Timestamp; none when None)."""
    raw = body if body is not None else json.dumps(event).encode()
    timestamp = str(int(time.time() if at is None else at))
    headers = {
        "HTTP_X_PROLIFIC_REQUEST_SIGNATURE": signature
        or prolific_signature(secret=secret, timestamp=timestamp, body=raw),
        "HTTP_X_PROLIFIC_REQUEST_TIMESTAMP": timestamp,
        "HTTP_X_EVENT_ID": event_id,
    }
    if sent is not None:
        headers["HTTP_X_TIMESTAMP"] = str(int(sent))
    return client.post(URL, data=raw, content_type="application/json", **headers)


@pytest.fixture
def received(client, django_capture_on_commit_callbacks):
    """post(), and the job it queued run (as a worker would, once the request committed)."""

    def deliver(*args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return post(client, *args, **kwargs)

    return deliver


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
    participant = ready_participant(
        study,
        prolific_pid="6a0000000000000000000001",
        prolific_study_id="5f0000000000000000000001",
        prolific_session_id="640000000000000000000001",
    )
    task = assignment_claim(participant=participant)
    return study, participant, task


def pool(study) -> list[int]:
    return sorted(StudyItem.objects.filter(study=study).values_list("reserved_count", flat=True))


def outcome() -> str:
    return ProlificWebhookReceipt.objects.get().outcome


def test_the_url_is_the_documented_one():
    assert reverse("prolific:webhook") == URL


def test_a_returned_submission_gives_its_clips_back_at_once(received, holding):
    study, participant, task = holding
    assert pool(study) == [1, 1, 1]
    with pytest.raises(Exception, match="no clip left"):
        assignment_claim(participant=ready_participant(study))

    answer = received(returned(participant))

    assert answer.status_code == 200 and answer.json()["detail"] == "received", answer.content
    assert outcome() == f"released task {task.pk}"
    task.refresh_from_db()
    assert task.status == Task.Status.EXPIRED and pool(study) == [0, 0, 0]
    record = ProlificSubmission.objects.get()
    assert (record.status, record.source, record.participant, record.released_task) == (
        "RETURNED",
        "webhook",
        participant,
        task.pk,
    )
    assert ProlificWebhookJob.objects.get().status == ProlificWebhookJob.Status.SUCCEEDED
    other = assignment_claim(participant=ready_participant(study))  # back in the pool: someone else takes them
    assert other.items.count() == 3


@pytest.mark.parametrize("status", ["TIMED-OUT", "REJECTED"])
def test_timed_out_and_rejected_release_too(received, holding, status):
    study, participant, _task = holding
    assert received(returned(participant, status)).status_code == 200
    assert pool(study) == [0, 0, 0]


def test_screened_out_is_known_as_prolific_spells_it(received, holding):
    """SCREENED OUT, with a space (submission-object); main knew only "SCREENED-OUT" and recorded
    Prolific's real value as unknown."""
    study, participant, _task = holding
    assert received(returned(participant, "SCREENED OUT")).status_code == 200
    assert outcome() == "submission status recorded"
    assert ProlificSubmission.objects.get().status == "SCREENED OUT" and pool(study) == [1, 1, 1]


def test_an_active_or_awaiting_review_submission_keeps_its_clips(received, holding):
    study, participant, _task = holding
    received(returned(participant, "AWAITING REVIEW"))
    assert outcome() == "submission status recorded" and pool(study) == [1, 1, 1]


def test_the_request_only_stores_the_event_and_a_job_acts_on_it(
    client,
    prolific_fake,
    settings,
    django_capture_on_commit_callbacks,
):
    """The answer comes before anything is asked of Prolific: a study.status.change is read from
    Prolific by the job, not in Prolific's request (main called Prolific, with retries, inside it)."""
    from tests.prolific.test_studies import created, english_study

    prolific_study = created(english_study(), settings)
    prolific_fake.state["studies"][prolific_study.prolific_id]["status"] = "PAUSED"  # paused in Prolific's app
    event = {"resource_id": prolific_study.prolific_id, "event_type": "study.status.change", "status": "PAUSED"}
    before = len(prolific_fake.calls)

    with django_capture_on_commit_callbacks(execute=False) as queued:
        answer = post(client, event)

    assert answer.status_code == 200 and answer.json()["detail"] == "received"
    assert len(prolific_fake.calls) == before  # Prolific was not called while its request waited
    job = ProlificWebhookJob.objects.get()
    assert job.status == ProlificWebhookJob.Status.QUEUED and len(queued) == 1
    with django_capture_on_commit_callbacks(execute=True):
        queued[0]()  # the worker
    job.refresh_from_db()
    prolific_study.refresh_from_db()
    assert job.status == ProlificWebhookJob.Status.SUCCEEDED and prolific_study.status == "PAUSED"
    assert outcome().endswith("follows Prolific: PAUSED")


def test_a_study_prolific_does_not_answer_for_is_read_again_later(
    received,
    prolific_fake,
    settings,
):
    from tests.prolific.test_studies import created, english_study

    prolific_study = created(english_study(), settings)
    prolific_fake.state["studies"][prolific_study.prolific_id]["status"] = "PAUSED"
    prolific_fake.fail("GET", r"studies/[^/]+/", 503, times=2 * settings.PROLIFIC_RETRY_ATTEMPTS)
    event = {"resource_id": prolific_study.prolific_id, "event_type": "study.status.change", "status": "PAUSED"}

    answer = received(event)

    assert answer.status_code == 200
    job = ProlificWebhookJob.objects.get()
    assert (job.status, job.attempts) == (ProlificWebhookJob.Status.SUCCEEDED, 3)  # two readings failed, then read
    prolific_study.refresh_from_db()
    assert prolific_study.status == "PAUSED"


def test_a_study_status_change_without_an_api_token_is_kept_and_answered_2xx(
    received,
    prolific_fake,
    settings,
):
    from tests.prolific.test_studies import created, english_study

    prolific_study = created(english_study(), settings)
    settings.PROLIFIC_API_TOKEN = ""  # the token is gone: prolific_study_sync cannot read the study
    event = {"resource_id": prolific_study.prolific_id, "event_type": "study.status.change", "status": "PAUSED"}

    answer = received(event)

    assert answer.status_code == 200, answer.content
    job = ProlificWebhookJob.objects.get()
    assert job.status == ProlificWebhookJob.Status.FAILED and "PROLIFIC_API_TOKEN is not set" in job.error
    assert ProlificWebhookReceipt.objects.get().status == "PAUSED"


def test_a_study_status_change_of_no_study_of_ours_is_recorded(received):
    event = {"resource_id": "study-1", "event_type": "study.status.change", "metadata": {}, "status": "PAUSED"}
    assert received(event).status_code == 200
    assert outcome() == "study status recorded: no study of ours runs as it"


# --- refused: not Prolific's -------------------------------------------------------------------------


def assert_nothing_changed(study, task):
    task.refresh_from_db()
    assert task.status == Task.Status.OPEN and pool(study) == [1, 1, 1]
    assert not ProlificSubmission.objects.exists() and not ProlificWebhookReceipt.objects.exists()
    assert not ProlificWebhookJob.objects.exists()


def test_a_forged_webhook_is_refused_and_changes_nothing(received, holding):
    study, participant, task = holding
    answer = received(returned(participant), secret="not-the-workspace-secret")
    assert answer.status_code == 401 and answer.json()["detail"] == "refused: the signature does not match"
    assert_nothing_changed(study, task)


def test_a_forged_webhook_naming_a_known_event_id_is_refused_too(received, holding):
    study, participant, _task = holding
    received(returned(participant, "AWAITING REVIEW"), event_id="evt-1")
    answer = received(returned(participant), secret="not-the-workspace-secret", event_id="evt-1")
    assert answer.status_code == 401
    assert ProlificWebhookReceipt.objects.count() == 1 and pool(study) == [1, 1, 1]


def test_a_body_changed_after_signing_is_refused(received, holding):
    study, participant, task = holding
    timestamp = str(int(time.time()))
    signed = prolific_signature(
        secret=SECRET, timestamp=timestamp, body=json.dumps(returned(participant, "ACTIVE")).encode()
    )
    answer = received(returned(participant), at=int(timestamp), signature=signed)
    assert answer.status_code == 401
    assert_nothing_changed(study, task)


def test_an_unsigned_webhook_is_refused(client, holding):
    study, participant, task = holding
    answer = client.post(URL, data=json.dumps(returned(participant)), content_type="application/json")
    assert answer.status_code == 401 and "missing X-Prolific-Request-Signature" in answer.json()["detail"]
    assert_nothing_changed(study, task)


def test_a_new_event_signed_outside_the_window_is_refused(received, holding, settings):
    study, participant, task = holding
    settings.PROLIFIC_WEBHOOK_TOLERANCE_SECONDS = 300
    answer = received(returned(participant), at=time.time() - 301)
    assert answer.status_code == 401 and "outside the tolerance window" in answer.json()["detail"]
    assert received(returned(participant), at=time.time() + 301).status_code == 401  # from the future too
    assert_nothing_changed(study, task)


def test_without_any_secret_every_webhook_is_refused(received, holding, settings):
    study, participant, task = holding
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    answer = received(returned(participant))
    assert answer.status_code == 401 and "no webhook secret is configured" in answer.json()["detail"]
    assert_nothing_changed(study, task)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"[1, 2]", "not a JSON object"),
        (b"{", "not JSON"),
        (b'{"event_type": "submission.status.change"}', "resource_id must be a text"),
        (b'{"event_type": "x", "resource_id": "' + b"r" * 65 + b'"}', "resource_id must be a text of 1 to 64"),
        (b'{"event_type": "x", "resource_id": "r", "status": 5}', "status must be a text"),
        (b'{"event_type": "x", "resource_id": "r", "metadata": ' + b"[" * 20 + b"]" * 20 + b"}", "nested deeper"),
    ],
)
def test_a_signed_body_that_is_not_an_event_is_a_400_naming_why(received, holding, body, problem):
    study, _participant, task = holding
    answer = received({}, body=body)
    assert answer.status_code == 400 and problem in answer.json()["detail"], answer.json()
    assert_nothing_changed(study, task)


def test_json_nested_100000_deep_is_a_400_not_a_500(received, holding):
    """A correctly signed body nested 100,000 deep: main's json.loads raised RecursionError (500)."""
    study, _participant, task = holding
    deep = b'{"event_type": "x", "resource_id": "r", "metadata": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    answer = received({}, body=deep)
    assert answer.status_code == 400 and "nested deeper than" in answer.json()["detail"]
    assert_nothing_changed(study, task)


def test_a_200_character_event_id_is_a_400_not_a_500(received, holding):
    """Main stored it as it came: over the column's 64 characters, PostgreSQL refused the insert (500)."""
    study, participant, task = holding
    answer = received(returned(participant), event_id="e" * 200)
    assert answer.status_code == 400
    assert answer.json()["detail"] == "refused: X-Event-ID is 200 characters long; Prolific's are at most 64"
    assert_nothing_changed(study, task)


@pytest.mark.parametrize("sent", ["soon", "9" * 13, str(int(time.time()) + 3600), str(int(time.time()) - 3 * 86400)])
def test_an_x_timestamp_that_cannot_be_the_events_is_a_400(client, holding, sent):
    study, participant, task = holding
    raw = json.dumps(returned(participant)).encode()
    timestamp = str(int(time.time()))
    answer = client.post(
        URL,
        data=raw,
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=prolific_signature(secret=SECRET, timestamp=timestamp, body=raw),
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
        HTTP_X_EVENT_ID="evt-1",
        HTTP_X_TIMESTAMP=sent,
    )
    assert answer.status_code == 400 and "X-Timestamp" in answer.json()["detail"]
    assert_nothing_changed(study, task)


# --- repeats: acknowledged, never acted on twice -----------------------------------------------------


def test_a_redelivery_is_acknowledged_whatever_its_age(received, holding, settings):
    """Prolific retries for 24 h with the same X-Event-ID. Main answered a repeat 409 when its bytes
    were the same and 401 when it was signed over 5 minutes ago: Prolific kept retrying what it had
    already taken. Both are acknowledged with 200 now, and nothing is done again."""
    study, participant, _task = holding
    first_sent = time.time() - 6 * 3600
    assert received(returned(participant), at=first_sent, sent=first_sent).status_code == 401  # signed too long ago
    assert received(returned(participant), at=time.time(), sent=first_sent).status_code == 200  # a retry, re-signed
    before = ProlificSubmission.objects.get()

    again = received(returned(participant), at=time.time(), sent=first_sent)  # Prolific missed our 200
    replayed = received(returned(participant), at=time.time() - 3600, sent=first_sent)  # an old delivery, late

    assert again.status_code == replayed.status_code == 200
    assert again.json()["detail"] == "already received: nothing done again"
    assert ProlificWebhookReceipt.objects.count() == 1 and ProlificWebhookJob.objects.count() == 1
    assert ProlificSubmission.objects.get().updated_at == before.updated_at and pool(study) == [0, 0, 0]


def test_the_same_bytes_again_are_acknowledged_and_change_nothing(received, holding):
    _study, participant, _task = holding
    signed_at = time.time()
    assert received(returned(participant, "ACTIVE"), at=signed_at, event_id="evt-a").status_code == 200
    assert received(returned(participant), at=signed_at + 2, event_id="evt-b").status_code == 200  # RETURNED
    before = ProlificSubmission.objects.get()
    assert before.status == "RETURNED"

    replay = received(returned(participant, "ACTIVE"), at=signed_at, event_id="evt-a")  # the same bytes again
    under_another_id = received(returned(participant, "ACTIVE"), at=signed_at, event_id="evt-forged")

    assert replay.status_code == under_another_id.status_code == 200  # main answered the first 409
    after = ProlificSubmission.objects.get()
    assert (after.status, after.status_at, after.updated_at) == ("RETURNED", before.status_at, before.updated_at)
    assert ProlificWebhookReceipt.objects.count() == 2


def test_events_are_ordered_by_x_timestamp_not_by_when_they_were_signed(received, holding):
    """A RETURNED sent a minute before an AWAITING REVIEW, whose delivery failed and was retried (signed
    anew) after it: it is the older statement and changes nothing. Main ordered by the signing time
    and released the task of a participant who had in fact finished."""
    study, participant, task = holding
    now = time.time()
    received(returned(participant), event_id="evt-returned", at=now - 60, sent=now - 60, body=b"{")  # lost: a 400
    assert (
        received(returned(participant, "AWAITING REVIEW"), event_id="evt-done", at=now - 5, sent=now - 5).status_code
        == 200
    )

    late = received(returned(participant), event_id="evt-returned", at=now, sent=now - 60)  # the retry

    assert late.status_code == 200
    assert ProlificSubmission.objects.get().status == "AWAITING REVIEW" and pool(study) == [1, 1, 1]
    returned_receipt = ProlificWebhookReceipt.objects.get(event_id="evt-returned")
    assert returned_receipt.outcome.startswith("an older statement than the one known")
    task.refresh_from_db()
    assert task.status == Task.Status.OPEN


def test_without_x_timestamp_the_signing_time_orders(received, holding):
    study, participant, _task = holding
    now = time.time()
    received(returned(participant, "AWAITING REVIEW"), at=now, event_id="evt-new")
    received(returned(participant), at=now - 60, event_id="evt-old")  # sent earlier, arrived later
    assert ProlificSubmission.objects.get().status == "AWAITING REVIEW" and pool(study) == [1, 1, 1]


def test_the_admin_lists_each_webhook_with_its_job(received, holding, client):
    from django.contrib.auth.models import User

    _study, participant, task = holding
    now = time.time()
    received(returned(participant), at=now, sent=now - 30)
    client.force_login(User.objects.create_superuser("boss"))
    receipt = ProlificWebhookReceipt.objects.get()
    jobs = client.get(reverse("admin:prolific_prolificwebhookjob_changelist")).content.decode()
    page = client.get(reverse("admin:prolific_prolificwebhookreceipt_change", args=[receipt.pk])).content.decode()
    assert "Succeeded" in jobs and str(receipt) in jobs
    assert f"released task {task.pk}" in page and "X-Timestamp: when Prolific sent the event" in page
