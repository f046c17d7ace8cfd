"""The Prolific client and the admin's "send to Prolific" (a background job), against the contract
fake (tests/prolific_fake), written from Prolific's documentation: token header, body checks (a
rejection needs a category from the list and a message of at least 100 characters), submission
statuses (a decided submission cannot be decided otherwise; the same decision again is ignored),
bulk approval's two variants, and errors as {"error": {"status", "title", "detail"}}.
"""

import contextlib
import json
import socket

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import Participant
from annotation.services.review import participants_decide
from prolific.client import ProlificClient, ProlificError
from prolific.services.decisions_send import participant_decisions_send
from tests.annotation.factories import ParticipantFactory, StudyFactory
from tests.prolific_fake.server import TOKEN
from tests.prolific_fake.submissions import submission_add, submission_of, took_part

MESSAGE = (
    "Your answers to the attention check clip did not follow its spoken instruction, and the words you marked "
    "did not match the audio of the other clips."
)
TRANSITION = r"submissions/[^/]+/transition/"
BULK_APPROVE = r"submissions/bulk-approve/"


@pytest.fixture
def prolific(prolific_fake):
    """The contract fake, under the name the review's tests know it by."""
    return prolific_fake


def status_of(fake, submission_id: str) -> str:
    return submission_of(fake, submission_id)["status"]


@pytest.fixture
def client_api(prolific):
    return ProlificClient.from_settings()


# --- the client, directly ---------------------------------------------------------


def test_from_settings_is_off_without_a_token(settings):
    settings.PROLIFIC_API_TOKEN = ""
    assert ProlificClient.from_settings() is None

    settings.PROLIFIC_API_TOKEN = "t"
    settings.PROLIFIC_API_URL = "http://127.0.0.1:9/api/v1"
    client = ProlificClient.from_settings()
    assert (client.token, client.base_url) == ("t", "http://127.0.0.1:9/api/v1/")


def test_a_token_and_a_submission_id_are_needed():
    with pytest.raises(ValueError, match="token"):
        ProlificClient(token="")
    with pytest.raises(ValueError, match="submission id"):
        ProlificClient(token=TOKEN).approve("")


def test_approve_sends_the_token_and_the_action(prolific, client_api):
    submission_add(prolific, study_id="st", participant_id="p1", submission_id="s1", status="AWAITING REVIEW")

    answer = client_api.approve("s1")

    assert answer["status"] == "APPROVED" and status_of(prolific, "s1") == "APPROVED"
    assert prolific.calls[0]["path"] == "submissions/s1/transition/"
    assert prolific.calls[0]["auth"] == f"Token {TOKEN}"
    assert json.loads(prolific.calls[0]["raw"]) == {"action": "APPROVE"}
    assert client_api.approve("s1")["status"] == "APPROVED"  # the same request again: ignored, as documented


def test_reject_sends_category_and_message(prolific, client_api):
    submission_add(prolific, study_id="st", participant_id="p1", submission_id="s1", status="AWAITING REVIEW")

    assert client_api.reject("s1", message=MESSAGE, category="FAILED_CHECK")["status"] == "REJECTED"
    assert prolific.bodies("POST", TRANSITION) == [
        {"action": "REJECT", "message": MESSAGE, "rejection_category": "FAILED_CHECK"}
    ]


def test_a_short_rejection_message_is_refused_by_prolific(prolific, client_api):
    submission_add(prolific, study_id="st", participant_id="p1", submission_id="s1", status="AWAITING REVIEW")

    with pytest.raises(ProlificError) as refused:
        client_api.reject("s1", message="Too short.", category="LOW_EFFORT")

    assert refused.value.status == 400
    assert "at least 100 characters" in refused.value.message
    assert str(refused.value).startswith("Prolific answered 400: ")
    assert status_of(prolific, "s1") == "AWAITING REVIEW"


def test_a_decided_submission_is_not_decided_otherwise(prolific, client_api):
    submission_add(prolific, study_id="st", participant_id="p1", submission_id="s1", status="APPROVED")
    with pytest.raises(ProlificError, match="Cannot reject a submission in status APPROVED"):
        client_api.reject("s1", message=MESSAGE, category="LOW_EFFORT")


def test_request_return_sends_the_reasons(prolific, client_api):
    submission_add(prolific, study_id="st", participant_id="p1", submission_id="s1", status="ACTIVE")

    answer = client_api.request_return("s1", reasons=["Didn't finish the study"])

    assert prolific.bodies("POST", r"submissions/s1/request-return/") == [
        {"request_return_reasons": ["Didn't finish the study"]}
    ]
    assert answer["return_requested"] and submission_of(prolific, "s1")["return_reasons"] == ["Didn't finish the study"]


def test_bulk_approve_takes_prolifics_answer_that_is_not_json(prolific, client_api):
    for n in (1, 2):
        submission_add(prolific, study_id="st", participant_id=f"p{n}", submission_id=f"s{n}", status="AWAITING REVIEW")

    assert client_api.bulk_approve(study_id="st", participant_ids=["p1", "p2"]) == {}  # "Bulk approve in progress"
    assert prolific.bodies("POST", BULK_APPROVE) == [{"study_id": "st", "participant_ids": ["p1", "p2"]}]
    assert {status_of(prolific, f"s{n}") for n in (1, 2)} == {"APPROVED"}


def test_errors_name_the_status_and_prolifics_message(prolific, client_api, settings):
    with pytest.raises(ProlificError, match=r"Prolific answered 404: No Submission matches the given query\."):
        client_api.approve("nobody")
    # A transition is safe to repeat: retried, each attempt a 502.
    prolific.fail("POST", TRANSITION, 502, body="Bad Gateway", times=settings.PROLIFIC_RETRY_ATTEMPTS)
    with pytest.raises(ProlificError, match="Prolific answered 502: Bad Gateway"):
        client_api.approve("behind-a-broken-proxy")
    with pytest.raises(ProlificError, match=r"401: Invalid token\."):
        ProlificClient(token="wrong", base_url=prolific.url).approve("nobody")


def test_an_unreachable_server_is_a_prolific_error():
    with socket_closed_port() as port:
        client = ProlificClient(token=TOKEN, base_url=f"http://127.0.0.1:{port}/api/v1/", timeout=2)
        with pytest.raises(ProlificError, match="could not connect") as error:
            client.approve("s1")
    assert (error.value.status, error.value.reached) == (0, False)  # nothing was sent


@contextlib.contextmanager
def socket_closed_port():
    """A port nothing listens on: one the system just handed out and we closed again."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield port


# --- sending decisions, through the service and the admin ----------------------------


@pytest.fixture
def reviewer(client):
    user = User.objects.create_user("researcher", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="change_participant"))
    client.force_login(user)
    return user


def send_and_show(client, study, capture) -> str:
    """Press "Send to Prolific"; the (eager) worker runs the queued job once the request's
    transaction commits; then the review page, as it reloads when the job has finished."""
    with capture(execute=True):
        response = client.post(reverse("admin:annotation_participant_send", args=[study.pk]))
    assert response.status_code == 302
    return client.get(reverse("admin:annotation_participant_review", args=[study.pk])).content.decode()


@pytest.mark.django_db
def test_admin_sends_approvals_in_bulk_rejections_and_return_requests(
    client, reviewer, prolific, django_capture_on_commit_callbacks
):
    study = StudyFactory()
    ana, ben, dan, eve = (ParticipantFactory(study=study) for _ in range(4))
    local = ParticipantFactory(study=study, prolific_pid="", prolific_study_id="", prolific_session_id="")
    for participant in (ana, ben, dan, eve):
        took_part(prolific, participant)
    url = reverse("admin:annotation_participant_review", args=[study.pk])

    client.post(url, {"participants": [ana.pk, ben.pk, local.pk], "decision": "approved"})
    client.post(
        url,
        {
            "participants": [dan.pk],
            "decision": "rejected",
            "rejection_category": "FAILED_CHECK",
            "rejection_message": MESSAGE,
        },
    )
    client.post(
        url, {"participants": [eve.pk], "decision": "return_requested", "return_reason": "Didn't finish the study"}
    )
    assert "Send 5 decisions to Prolific" in client.get(url).content.decode()

    page = send_and_show(client, study, django_capture_on_commit_callbacks)

    assert prolific.bodies("POST", BULK_APPROVE) == [
        {"study_id": ana.prolific_study_id, "participant_ids": [ana.prolific_pid, ben.prolific_pid]}
    ]
    assert prolific.bodies("POST", f"submissions/{dan.prolific_session_id}/transition/") == [
        {"action": "REJECT", "message": MESSAGE, "rejection_category": "FAILED_CHECK"}
    ]
    assert prolific.bodies("POST", f"submissions/{eve.prolific_session_id}/request-return/") == [
        {"request_return_reasons": ["Didn't finish the study"]}
    ]
    assert {s["participant_id"]: s["status"] for s in prolific.state["submissions"].values()} == {
        ana.prolific_pid: "APPROVED",
        ben.prolific_pid: "APPROVED",
        dan.prolific_pid: "REJECTED",
        eve.prolific_pid: "AWAITING REVIEW",
    }
    for participant in (ana, ben, dan, eve):
        participant.refresh_from_db()
        assert participant.decision_sent_at is not None
    local.refresh_from_db()
    assert local.decision_sent_at is None
    assert "Sent to Prolific:" in page
    assert "not a Prolific participant" in page
    assert "Send 1 decision to Prolific" in page  # the local one stays unsent

    calls = len(prolific.calls)
    send_and_show(client, study, django_capture_on_commit_callbacks)
    assert len(prolific.calls) == calls  # the local participant is skipped again, nothing resent


@pytest.mark.django_db
def test_admin_reports_prolifics_errors_and_keeps_the_decision_unsent(
    client, reviewer, prolific, django_capture_on_commit_callbacks
):
    study = StudyFactory()
    waiting, already, unknown = (ParticipantFactory(study=study) for _ in range(3))
    took_part(prolific, waiting)
    took_part(prolific, already, status="APPROVED")  # approved on Prolific's site in the meantime
    participants_decide(
        participants=[waiting, already, unknown], decision="rejected", note=MESSAGE, category="LOW_EFFORT"
    )

    page = send_and_show(client, study, django_capture_on_commit_callbacks)

    assert (
        f"Not sent for {already.prolific_pid}: Prolific answered 400: Cannot reject a submission in status APPROVED"
        in page
    )
    assert f"Not sent for {unknown.prolific_pid}: Prolific answered 404: No Submission matches the given query." in page
    for participant in (waiting, already, unknown):
        participant.refresh_from_db()
    assert waiting.decision_sent_at is not None
    assert already.decision_sent_at is None and unknown.decision_sent_at is None


@pytest.mark.django_db
def test_a_failed_bulk_approval_marks_none_of_its_participants(prolific):
    study = StudyFactory()
    waiting, never_submitted = ParticipantFactory(study=study), ParticipantFactory(study=study)
    took_part(prolific, waiting)
    participants_decide(participants=[waiting, never_submitted], decision="approved")

    report = participant_decisions_send(study=study, client=ProlificClient.from_settings())

    assert report.sent == []
    assert [participant for participant, _ in report.failed] == [waiting.prolific_pid, never_submitted.prolific_pid]
    assert f"Not in study {waiting.prolific_study_id}: {never_submitted.prolific_pid}" in report.failed[0][1]
    assert status_of(prolific, waiting.prolific_session_id) == "AWAITING REVIEW"


@pytest.mark.django_db
def test_an_approval_without_a_prolific_study_id_goes_one_by_one(prolific):
    participant = ParticipantFactory(prolific_study_id="")
    took_part(prolific, participant)
    participants_decide(participants=[participant], decision="approved")

    report = participant_decisions_send(study=participant.study, client=ProlificClient.from_settings())

    assert report.sent == [participant.prolific_pid]
    assert prolific.bodies("POST", f"submissions/{participant.prolific_session_id}/transition/") == [
        {"action": "APPROVE"}
    ]


@pytest.mark.django_db
def test_a_rejection_without_a_session_id_is_skipped(prolific):
    participant = ParticipantFactory(prolific_session_id="")
    participants_decide(participants=[participant], decision="rejected", note=MESSAGE, category="NO_DATA")

    report = participant_decisions_send(study=participant.study, client=ProlificClient.from_settings())

    assert report.skipped == [(participant.prolific_pid, "no Prolific submission id (SESSION_ID) was recorded")]
    assert prolific.calls == []


@pytest.mark.django_db
def test_a_decision_changed_while_sending_is_not_marked_sent(prolific):
    participant = ParticipantFactory(prolific_study_id="")
    took_part(prolific, participant)
    participants_decide(participants=[participant], decision="approved")

    class ChangingMindsClient(ProlificClient):
        def approve(self, submission_id):
            answer = super().approve(submission_id)
            Participant.objects.filter(pk=participant.pk).update(decision="pending")  # another admin, meanwhile
            return answer

    client = ChangingMindsClient(token=TOKEN, base_url=prolific.url)
    report = participant_decisions_send(study=participant.study, client=client)

    assert report.sent == []
    assert report.failed == [
        (participant.prolific_pid, "the decision changed while it was sent; Prolific got 'approved'")
    ]


@pytest.mark.django_db
def test_nothing_to_send(client, reviewer, prolific, django_capture_on_commit_callbacks):
    study = StudyFactory()
    ParticipantFactory(study=study)

    page = send_and_show(client, study, django_capture_on_commit_callbacks)

    assert "There were no decisions left to send." in page
    assert prolific.calls == []
