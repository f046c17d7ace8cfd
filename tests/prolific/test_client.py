"""The Prolific client and the admin's "send to Prolific" (a background job), against a real local HTTP server.

These machines reach no outside host, so `FakeProlific` serves the four endpoints on
127.0.0.1 as Prolific's API v1 documentation describes them: token header, body checks
(a rejection needs a category from the list and a message of at least 100 characters),
submission states, and errors as {"error": {"status", "title", "detail"}}.
"""

import contextlib
import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import Participant
from annotation.services.review import REJECTION_CATEGORIES, participants_decide
from prolific.client import ProlificClient, ProlificError
from prolific.services.decisions_send import participant_decisions_send
from tests.annotation.factories import ParticipantFactory, StudyFactory

TOKEN = "local-test-token"
MESSAGE = (
    "Your answers to the attention check clip did not follow its spoken instruction, and the words you marked "
    "did not match the audio of the other clips."
)
TRANSITION = re.compile(r"^/api/v1/submissions/(?P<id>[^/]+)/transition/$")
RETURN = re.compile(r"^/api/v1/submissions/(?P<id>[^/]+)/request-return/$")
BULK_APPROVE = "/api/v1/submissions/bulk-approve/"


class FakeProlific:
    """Prolific's submission endpoints, in memory, with every call recorded."""

    def __init__(self):
        self.calls: list[dict] = []
        self.submissions: dict[str, dict] = {}  # submission id -> participant, study_id, status
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fake.calls.append({"path": self.path, "auth": self.headers.get("Authorization"), "raw": raw})
                status, body = fake.answer(self.path, self.headers.get("Authorization"), raw)
                payload = body.encode() if isinstance(body, str) else json.dumps(body).encode() if body else b""
                self.send_response(status)
                self.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v1/"

    def add(self, participant, status="AWAITING REVIEW"):
        self.submissions[participant.prolific_session_id] = {
            "participant": participant.prolific_pid,
            "study_id": participant.prolific_study_id,
            "status": status,
        }

    def bodies(self, path_part: str) -> list[dict]:
        return [json.loads(call["raw"]) for call in self.calls if path_part in call["path"]]

    def answer(self, path: str, auth: str | None, raw: bytes):
        if auth != f"Token {TOKEN}":
            return 401, _error(401, "Unauthorized", "Invalid token.")
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, _error(400, "Bad request", "JSON parse error.")
        if path == BULK_APPROVE:
            return self.bulk_approve(body)
        for pattern, handle in ((TRANSITION, self.transition), (RETURN, self.request_return)):
            if match := pattern.match(path):
                if match["id"] == "behind-a-broken-proxy":
                    return 502, "Bad Gateway"
                if match["id"] not in self.submissions:
                    return 404, _error(404, "Not found", "No Submission matches the given query.")
                return handle(self.submissions[match["id"]], match["id"], body)
        return 404, _error(404, "Not found", f"No route {path}")

    def transition(self, submission, submission_id, body):
        action = body.get("action")
        if action not in ("APPROVE", "REJECT"):
            return 400, _error(400, "Bad request", {"action": [f'"{action}" is not a valid choice.']})
        if action == "REJECT":
            if body.get("rejection_category") not in REJECTION_CATEGORIES:
                return 400, _error(400, "Bad request", {"rejection_category": ["This field is required."]})
            if len(body.get("message") or "") < 100:
                return 400, _error(400, "Bad request", {"message": ["Ensure this field has at least 100 characters."]})
        if submission["status"] != "AWAITING REVIEW":
            return 400, _error(400, "Bad request", f"Cannot transition a submission in status {submission['status']}.")
        submission["status"] = "APPROVED" if action == "APPROVE" else "REJECTED"
        return 200, {"id": submission_id, **submission}

    def request_return(self, submission, submission_id, body):
        reasons = body.get("request_return_reasons")
        if not reasons or not isinstance(reasons, list) or not all(isinstance(r, str) and r for r in reasons):
            return 400, _error(400, "Bad request", {"request_return_reasons": ["This field is required."]})
        if submission["status"] not in ("ACTIVE", "AWAITING REVIEW"):
            return 400, _error(400, "Bad request", "Only an active or unreviewed submission can be asked to return.")
        submission["return_requested"] = reasons
        return 200, {"id": submission_id, **submission}

    def bulk_approve(self, body):
        ids, study_id = body.get("participant_ids"), body.get("study_id")
        if not study_id or not isinstance(ids, list) or not ids:
            return 400, _error(400, "Bad request", {"participant_ids": ["This field is required."]})
        waiting = {s["participant"]: s for s in self.submissions.values() if s["study_id"] == study_id}
        unknown = [pid for pid in ids if pid not in waiting or waiting[pid]["status"] != "AWAITING REVIEW"]
        if unknown:
            return 400, _error(400, "Bad request", f"No submissions awaiting review for {', '.join(unknown)}.")
        for pid in ids:
            waiting[pid]["status"] = "APPROVED"
        return 200, None  # Prolific answers an empty 200


def _error(status: int, title: str, detail) -> dict:
    return {"error": {"status": status, "title": title, "detail": detail}}


@pytest.fixture
def prolific(settings):
    fake = FakeProlific()
    thread = threading.Thread(target=fake.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    settings.PROLIFIC_API_TOKEN = TOKEN
    settings.PROLIFIC_API_URL = fake.url
    settings.PROLIFIC_RETRY_INITIAL_WAIT_SECONDS = 0.01  # the 502 is retried: quickly here
    yield fake
    fake.server.shutdown()
    fake.server.server_close()
    thread.join(timeout=5)


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
    prolific.submissions["s1"] = {"participant": "p1", "study_id": "st", "status": "AWAITING REVIEW"}

    answer = client_api.approve("s1")

    assert answer["status"] == "APPROVED"
    assert prolific.calls[0]["path"] == "/api/v1/submissions/s1/transition/"
    assert prolific.calls[0]["auth"] == f"Token {TOKEN}"
    assert json.loads(prolific.calls[0]["raw"]) == {"action": "APPROVE"}


def test_reject_sends_category_and_message(prolific, client_api):
    prolific.submissions["s1"] = {"participant": "p1", "study_id": "st", "status": "AWAITING REVIEW"}

    assert client_api.reject("s1", message=MESSAGE, category="FAILED_CHECK")["status"] == "REJECTED"
    assert prolific.bodies("/s1/transition/") == [
        {"action": "REJECT", "message": MESSAGE, "rejection_category": "FAILED_CHECK"}
    ]


def test_a_short_rejection_message_is_refused_by_prolific(prolific, client_api):
    prolific.submissions["s1"] = {"participant": "p1", "study_id": "st", "status": "AWAITING REVIEW"}

    with pytest.raises(ProlificError) as refused:
        client_api.reject("s1", message="Too short.", category="LOW_EFFORT")

    assert refused.value.status == 400
    assert "at least 100 characters" in refused.value.message
    assert str(refused.value).startswith("Prolific answered 400: ")
    assert prolific.submissions["s1"]["status"] == "AWAITING REVIEW"


def test_request_return_sends_the_reasons(prolific, client_api):
    prolific.submissions["s1"] = {"participant": "p1", "study_id": "st", "status": "ACTIVE"}

    client_api.request_return("s1", reasons=["Didn't finish the study"])

    assert prolific.bodies("/s1/request-return/") == [{"request_return_reasons": ["Didn't finish the study"]}]
    assert prolific.submissions["s1"]["return_requested"] == ["Didn't finish the study"]


def test_bulk_approve_takes_an_empty_answer(prolific, client_api):
    for n in (1, 2):
        prolific.submissions[f"s{n}"] = {"participant": f"p{n}", "study_id": "st", "status": "AWAITING REVIEW"}

    assert client_api.bulk_approve(study_id="st", participant_ids=["p1", "p2"]) == {}
    assert prolific.bodies(BULK_APPROVE) == [{"study_id": "st", "participant_ids": ["p1", "p2"]}]
    assert {s["status"] for s in prolific.submissions.values()} == {"APPROVED"}


def test_errors_name_the_status_and_prolifics_message(prolific, client_api):
    with pytest.raises(ProlificError, match=r"Prolific answered 404: No Submission matches the given query\."):
        client_api.approve("nobody")
    with pytest.raises(ProlificError, match="Prolific answered 502: Bad Gateway"):
        client_api.approve("behind-a-broken-proxy")
    with pytest.raises(ProlificError, match=r"401: Invalid token\."):
        ProlificClient(token="wrong", base_url=prolific.url).approve("nobody")


def test_an_unreachable_server_is_a_prolific_error():
    with socket_closed_port() as port:
        client = ProlificClient(token=TOKEN, base_url=f"http://127.0.0.1:{port}/api/v1/", timeout=2)
        with pytest.raises(ProlificError, match="could not reach") as error:
            client.approve("s1")
    assert error.value.status == 0


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
        prolific.add(participant)
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

    assert prolific.bodies(BULK_APPROVE) == [
        {"study_id": ana.prolific_study_id, "participant_ids": [ana.prolific_pid, ben.prolific_pid]}
    ]
    assert prolific.bodies(f"/{dan.prolific_session_id}/transition/") == [
        {"action": "REJECT", "message": MESSAGE, "rejection_category": "FAILED_CHECK"}
    ]
    assert prolific.bodies(f"/{eve.prolific_session_id}/request-return/") == [
        {"request_return_reasons": ["Didn't finish the study"]}
    ]
    assert {s["participant"]: s["status"] for s in prolific.submissions.values()} == {
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
    prolific.add(waiting)
    prolific.add(already, status="APPROVED")  # approved on Prolific's site in the meantime
    participants_decide(
        participants=[waiting, already, unknown], decision="rejected", note=MESSAGE, category="LOW_EFFORT"
    )

    page = send_and_show(client, study, django_capture_on_commit_callbacks)

    assert (
        f"Not sent for {already.prolific_pid}: Prolific answered 400: Cannot transition a submission in status APPROVED."
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
    prolific.add(waiting)
    participants_decide(participants=[waiting, never_submitted], decision="approved")

    report = participant_decisions_send(study=study, client=ProlificClient.from_settings())

    assert report.sent == []
    assert [participant for participant, _ in report.failed] == [waiting.prolific_pid, never_submitted.prolific_pid]
    assert "No submissions awaiting review" in report.failed[0][1]
    assert prolific.submissions[waiting.prolific_session_id]["status"] == "AWAITING REVIEW"


@pytest.mark.django_db
def test_an_approval_without_a_prolific_study_id_goes_one_by_one(prolific):
    participant = ParticipantFactory(prolific_study_id="")
    prolific.add(participant)
    participants_decide(participants=[participant], decision="approved")

    report = participant_decisions_send(study=participant.study, client=ProlificClient.from_settings())

    assert report.sent == [participant.prolific_pid]
    assert prolific.bodies(f"/{participant.prolific_session_id}/transition/") == [{"action": "APPROVE"}]


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
    prolific.add(participant)
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
