"""Two requests at once, each in its own thread and transaction on PostgreSQL: two admin
"Quality bonus" submits make one batch, two identical API requests make one (with or without the same
Idempotency-Key), and two deliveries of one webhook store it once. A barrier holds each request just
before it would write, so that both have passed every check made before the write: only the unique
constraints can keep the second out."""

import json
import threading
import time
import urllib.request
from urllib.error import HTTPError

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection, connections
from django.test import Client
from django.urls import reverse

from prolific.client import ProlificClient
from prolific.models import BonusBatch, ProlificWebhookJob, ProlificWebhookReceipt
from prolific.services import webhooks as webhook_service
from prolific.signature import prolific_signature
from tests.annotation.test_review import SmallStudy
from tests.prolific_fake.submissions import took_part

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
SETUP = r"submissions/bonus-payments/"


@pytest.fixture(autouse=True)
def postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("two requests in two transactions at once are tested on PostgreSQL")


@pytest.fixture
def small(prolific_fake):
    study = SmallStudy()
    for person in (study.ana, study.ben, study.cleo, study.dan, study.eve, study.fay):
        person.refresh_from_db()
        took_part(prolific_fake, person, status="APPROVED")
    return study


@pytest.fixture
def both_past_the_checks(monkeypatch):
    """Each bonus set-up waits at Prolific's door until the other has come as far."""
    barrier = threading.Barrier(2, timeout=30)
    set_up = ProlificClient.bonus_payments_create

    def meeting(self, **kwargs):
        barrier.wait()
        return set_up(self, **kwargs)

    monkeypatch.setattr(ProlificClient, "bonus_payments_create", meeting)
    return barrier


def at_once(*requests) -> list:
    """Run each request in a thread of its own (its own database connection), all at once."""
    answers = [None] * len(requests)

    def run(n, request):
        try:
            answers[n] = request()
        finally:
            connections.close_all()  # this thread's connection

    threads = [threading.Thread(target=run, args=(n, request)) for n, request in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


def test_two_admin_submits_at_once_make_one_batch(small, prolific_fake, both_past_the_checks):
    boss = User.objects.create_superuser("boss")
    form = {"study": small.study.pk, "amount": "2.00", "min_kappa": "0.5", "reason": ""}

    def submit():
        browser = Client()  # a second tab, or a double click's second POST
        browser.force_login(boss)
        return browser.post(reverse("admin:prolific_bonusbatch_add"), form)

    answers = at_once(submit, submit)

    [batch] = BonusBatch.objects.all()
    assert sorted(answer.status_code for answer in answers) == [200, 302]
    refused = next(answer for answer in answers if answer.status_code == 200).content.decode()
    assert f"in this study: bonus batch #{batch.pk}" in refused
    assert len(prolific_fake.calls_to("POST", SETUP)) == 2  # both reached Prolific, where a set-up pays nothing
    assert batch.lines.count() == 3


def api_create(user, body: dict, **headers):
    def create():
        caller = Client()
        caller.force_login(user)
        return caller.post("/api/v1/bonus-batches/", body, content_type="application/json", **headers)

    return create


@pytest.fixture
def researcher():
    user = User.objects.create_user("researcher", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_bonusbatch", "add_bonusbatch"]))
    return user


def test_two_identical_api_requests_at_once_make_one_batch(small, prolific_fake, both_past_the_checks, researcher):
    create = api_create(researcher, {"study": small.study.pk, "amount_cents": 200, "min_kappa": 0.5})

    answers = at_once(create, create)

    [batch] = BonusBatch.objects.all()
    assert sorted(answer.status_code for answer in answers) == [201, 409]
    assert next(a for a in answers if a.status_code == 409).json()["earlier_batches"] == [batch.pk]


def test_two_retries_with_one_idempotency_key_at_once_answer_the_first(small, prolific_fake, researcher, monkeypatch):
    set_up = ProlificClient.bonus_payments_create

    def slow(self, **kwargs):  # the first holds its transaction open while the second arrives
        answer = set_up(self, **kwargs)
        time.sleep(0.5)
        return answer

    monkeypatch.setattr(ProlificClient, "bonus_payments_create", slow)
    body = {"study": small.study.pk, "amount_cents": 200, "min_kappa": 0.5}
    create = api_create(researcher, body, HTTP_IDEMPOTENCY_KEY="quality-bonus-1")

    answers = at_once(create, create)

    assert [answer.status_code for answer in answers] == [201, 201] and answers[0].json() == answers[1].json()
    assert BonusBatch.objects.count() == 1 and len(prolific_fake.calls_to("POST", SETUP)) == 1
    assert sorted(answer.get("Idempotent-Replayed", "") for answer in answers) == ["", "true"]


def send(request: urllib.request.Request) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except HTTPError as error:
        return error.code, error.read().decode()


def test_two_deliveries_of_one_webhook_at_once_are_stored_once(live_server, settings, monkeypatch):
    settings.PROLIFIC_WEBHOOK_SECRET = "s3cret"
    barrier = threading.Barrier(2, timeout=30)
    checked = webhook_service._received_already

    def both_looked(event_id, signature):
        seen = checked(event_id, signature)
        barrier.wait()  # both have found it new
        return seen

    monkeypatch.setattr(webhook_service, "_received_already", both_looked)
    raw = json.dumps(
        {"resource_id": "s-1", "event_type": "submission.status.change", "participant_id": "p", "status": "ACTIVE"}
    ).encode()

    def deliver(at: str):
        def post():
            request = urllib.request.Request(f"{live_server.url}/prolific/webhooks/", data=raw, method="POST")
            request.add_header("Content-Type", "application/json")
            request.add_header("X-Prolific-Request-Timestamp", at)
            request.add_header(
                "X-Prolific-Request-Signature", prolific_signature(secret="s3cret", timestamp=at, body=raw)
            )
            request.add_header("X-Event-ID", "evt-twice")
            return send(request)

        return post

    now = int(time.time())
    answers = at_once(deliver(str(now)), deliver(str(now - 1)))  # a retry signed anew, arriving with the first

    assert [status for status, _ in answers] == [200, 200]
    assert sorted(json.loads(page)["detail"] for _, page in answers) == [
        "already received: nothing done again",
        "received",
    ]
    assert ProlificWebhookReceipt.objects.count() == 1 and ProlificWebhookJob.objects.count() == 1
