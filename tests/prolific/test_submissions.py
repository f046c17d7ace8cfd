"""Returned work back in the pool within one poll or one webhook (issue 22), against the contract
fake: the poll reads a study's submissions; the webhooks are subscribed from the service the admin
uses, and the fake POSTs a signed submission.status.change to the live server when a participant
returns their place."""

import json
import threading
import time

import pytest
from django.db import OperationalError

from annotation.models import StudyItem, Task
from annotation.services.assignment import NoTaskAvailable, assignment_claim
from prolific.client import ProlificClient
from prolific.models import ProlificSubmission, ProlificWebhookSecret, ProlificWebhookSubscription
from prolific.services.submissions import (
    prolific_study_ids_to_poll,
    prolific_submissions_poll,
    prolific_submissions_poll_periodically,
)
from prolific.services.webhooks import prolific_webhooks_subscribe
from tests.annotation.study_helpers import live_study, ready_participant
from tests.prolific_fake.submissions import submission_add, submission_status_set


def holding(fake, *, prolific_study_id="5f0000000000000000000001"):
    """Every clip of a study (target 1) reserved by one participant's open task, known to the fake."""
    study = live_study(clips=3, clips_per_task=3, target_annotations=1)
    participant = ready_participant(
        study, prolific_pid="6a0000000000000000000001", prolific_study_id=prolific_study_id, prolific_session_id="s-1"
    )
    task = assignment_claim(participant=participant)
    submission_add(fake, study_id=prolific_study_id, participant_id=participant.prolific_pid, submission_id="s-1")
    return study, task


def reserved(study) -> list[int]:
    return sorted(StudyItem.objects.filter(study=study).values_list("reserved_count", flat=True))


def back_in_the_pool(study) -> bool:
    other = assignment_claim(participant=ready_participant(study))
    return other.items.count() == 3


@pytest.mark.django_db
def test_one_poll_gives_a_returned_submissions_clips_back(prolific_fake):
    study, task = holding(prolific_fake)
    client = ProlificClient.from_settings()
    assert prolific_study_ids_to_poll() == ["5f0000000000000000000001"]
    assert prolific_submissions_poll(client=client)["released"] == 0  # still ACTIVE: nothing to do
    with pytest.raises(NoTaskAvailable):
        assignment_claim(participant=ready_participant(study))

    submission_status_set(prolific_fake, "s-1", "RETURNED", notify=False)
    outcome = prolific_submissions_poll(client=client)

    assert outcome == {"studies": 1, "submissions": 1, "released": 1, "errors": {}}
    task.refresh_from_db()
    assert task.status == Task.Status.EXPIRED and reserved(study) == [0, 0, 0]
    assert ProlificSubmission.objects.get().source == "poll"
    assert prolific_study_ids_to_poll() == []  # nothing open left there: no more calls
    assert back_in_the_pool(study)


@pytest.mark.django_db
def test_a_screened_out_submission_is_read_as_prolific_spells_it(prolific_fake):
    """Prolific says SCREENED OUT (a space); main knew only SCREENED-OUT and skipped the real one."""
    study, task = holding(prolific_fake)
    submission_status_set(prolific_fake, "s-1", "SCREENED OUT", notify=False)

    outcome = prolific_submissions_poll(client=ProlificClient.from_settings())

    assert outcome == {"studies": 1, "submissions": 1, "released": 0, "errors": {}}
    assert ProlificSubmission.objects.get().status == "SCREENED OUT"
    task.refresh_from_db()
    assert task.status == Task.Status.OPEN and reserved(study) == [1, 1, 1]
    with pytest.raises(ValueError, match="not one of Prolific's submission statuses"):
        submission_status_set(prolific_fake, "s-1", "SCREENED-OUT", notify=False)  # the fake refuses main's spelling


@pytest.mark.django_db
def test_a_study_prolific_does_not_know_is_reported_and_the_others_still_polled(prolific_fake):
    holding(prolific_fake)
    submission_status_set(prolific_fake, "s-1", "TIMED-OUT", notify=False)
    outcome = prolific_submissions_poll(
        client=ProlificClient.from_settings(), prolific_study_ids=["unknown-study", "5f0000000000000000000001"]
    )
    assert outcome["released"] == 1 and "404" in outcome["errors"]["unknown-study"]


def _status(task) -> str:
    try:
        return Task.objects.get(pk=task.pk).status
    except OperationalError:  # SQLite's shared in-memory test database: "table is locked" while the poll writes
        return Task.Status.OPEN


@pytest.mark.django_db(transaction=True)
def test_the_workers_periodic_poll_releases_without_anyone_looking(prolific_fake, settings):
    settings.PROLIFIC_POLL_SECONDS = 0.1
    study, task = holding(prolific_fake)
    submission_status_set(prolific_fake, "s-1", "RETURNED", notify=False)
    stopped = threading.Event()
    poller = threading.Thread(target=prolific_submissions_poll_periodically, args=(stopped,), daemon=True)
    poller.start()
    try:
        deadline = time.monotonic() + 60  # a busy machine: the poll itself comes every 0.1 s
        while _status(task) == Task.Status.OPEN and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stopped.set()
        poller.join(timeout=10)
    assert Task.objects.get(pk=task.pk).status == Task.Status.EXPIRED and reserved(study) == [0, 0, 0]


@pytest.mark.django_db(transaction=True)
def test_one_webhook_from_prolific_gives_the_clips_back(prolific_fake, live_server, settings):
    settings.PROLIFIC_WEBHOOK_ALLOW_HTTP = True
    prolific_fake.state["allow_http_targets"] = True  # stands in for the public https address
    target = f"{live_server.url}/prolific/webhooks/"
    made = prolific_webhooks_subscribe(client=ProlificClient.from_settings(), workspace_id="ws-1", target_url=target)
    assert sorted(s.event_type for s in made) == ["study.status.change", "submission.status.change"]
    assert all(s.confirmed for s in ProlificWebhookSubscription.objects.all())
    assert ProlificWebhookSecret.objects.get().secret == prolific_fake.state["hooks"]["secrets"]["ws-1"]["value"]
    study, task = holding(prolific_fake)

    submission_status_set(prolific_fake, "s-1", "RETURNED")  # Prolific POSTs the signed event

    [sent] = prolific_fake.state["hooks"]["sent"]
    url, status = sent["url"], sent["status"]
    assert (url, status) == (target, 200)
    task.refresh_from_db()
    assert task.status == Task.Status.EXPIRED and reserved(study) == [0, 0, 0]
    assert back_in_the_pool(study)


@pytest.mark.django_db(transaction=True)
def test_prolifics_retries_of_an_event_are_acknowledged_and_acted_on_once(prolific_fake, live_server, settings):
    """As the fake redelivers (rules.WEBHOOK_EVENT_ID, WEBHOOK_RETRIES): the same X-Event-ID and
    X-Timestamp, signed anew, and once the very bytes of the first delivery (a replay): each 200,
    one receipt, one job, one released task."""
    from prolific.models import ProlificWebhookJob, ProlificWebhookReceipt
    from tests.prolific_fake.webhooks import events_sent, redeliver

    settings.PROLIFIC_WEBHOOK_ALLOW_HTTP = True
    prolific_fake.state["allow_http_targets"] = True
    target = f"{live_server.url}/prolific/webhooks/"
    prolific_webhooks_subscribe(client=ProlificClient.from_settings(), workspace_id="ws-1", target_url=target)
    study, task = holding(prolific_fake)

    submission_status_set(prolific_fake, "s-1", "RETURNED")
    [first] = events_sent(prolific_fake)
    time.sleep(1.1)  # the retry is signed in another second: another signature
    again = redeliver(prolific_fake, first["event_id"])
    replayed = redeliver(prolific_fake, first["event_id"], resign=False)

    assert again == replayed == [(target, 200)]
    sent = events_sent(prolific_fake)
    assert len({s["headers"]["X-Prolific-Request-Signature"] for s in sent}) == 2  # re-signed, then replayed
    assert {s["headers"]["X-Timestamp"] for s in sent} == {first["headers"]["X-Timestamp"]}
    assert ProlificWebhookReceipt.objects.count() == 1 and ProlificWebhookJob.objects.count() == 1
    task.refresh_from_db()
    assert task.status == Task.Status.EXPIRED and reserved(study) == [0, 0, 0]


@pytest.mark.django_db(transaction=True)
def test_the_signing_secret_is_not_kept_in_the_call_log(prolific_fake, live_server, settings):
    from prolific.models import ProlificCall

    settings.PROLIFIC_WEBHOOK_ALLOW_HTTP = True
    prolific_fake.state["allow_http_targets"] = True
    target = f"{live_server.url}/prolific/webhooks/"
    prolific_webhooks_subscribe(client=ProlificClient.from_settings(), workspace_id="ws-1", target_url=target)
    secret = prolific_fake.state["hooks"]["secrets"]["ws-1"]["value"]
    assert secret and ProlificWebhookSecret.objects.get().secret == secret

    calls = list(ProlificCall.objects.values_list("path", "request_body", "response_body"))
    assert "hooks/secrets/" in [path for path, _, _ in calls]
    assert not [path for path, *bodies in calls if secret in json.dumps(bodies)]


@pytest.mark.django_db
def test_subscribing_refuses_an_address_prolific_would_not_call(prolific_fake):
    with pytest.raises(ValueError, match="only calls https://"):
        prolific_webhooks_subscribe(
            client=ProlificClient.from_settings(), workspace_id="ws-1", target_url="http://example.org/hooks"
        )
    assert not ProlificWebhookSecret.objects.exists()


@pytest.mark.django_db
def test_the_api_polls_with_change_participant_and_lists_with_view(client, prolific_fake):
    from django.contrib.auth.models import Permission, User

    study, task = holding(prolific_fake)
    submission_status_set(prolific_fake, "s-1", "RETURNED", notify=False)
    user = User.objects.create_user("researcher")
    client.force_login(user)
    assert client.post("/api/v1/prolific-submissions/poll/").status_code == 403
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["change_participant", "view_prolificsubmission"])
    )

    answer = client.post("/api/v1/prolific-submissions/poll/")

    assert answer.status_code == 200 and answer.json()["released"] == 1 and reserved(study) == [0, 0, 0]
    [listed] = client.get("/api/v1/prolific-submissions/").json()["results"]
    assert (listed["submission_id"], listed["status"], listed["released_task"]) == ("s-1", "RETURNED", task.pk)
