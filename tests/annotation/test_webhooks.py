"""Webhooks out, against a receiver this test starts on 127.0.0.1 that checks each signature with
the `standardwebhooks` library, as a researcher's receiver would."""

import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from standardwebhooks import Webhook, WebhookVerificationError

from annotation.models import (
    ImportJob,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from annotation.services.assignment import assignment_claim
from annotation.services.submission import annotation_submit
from annotation.services.webhooks import webhook_delivery_run, webhook_event_emit
from annotation.shared.jobs import job_run
from tests.annotation.study_helpers import first_pending, listened, live_study, marks, ready_participant
from tests.annotation.test_import_job_worker import celery_worker, reads_never_block_the_worker  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)  # deliveries are sent once their rows commit


@dataclass
class Receiver:
    """Answers each POST with the next status of `statuses` (the last repeats) and keeps what came."""

    statuses: list[int]
    requests: list[dict] = field(default_factory=list)
    url: str = ""

    def next_status(self) -> int:
        return self.statuses[min(len(self.requests), len(self.statuses)) - 1]


@contextmanager
def receiver(*statuses: int):
    state = Receiver(statuses=list(statuses))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"])).decode()
            state.requests.append(
                {"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body, "at": time.monotonic()}
            )
            self.send_response(state.next_status())
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_port}/hooks"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def subscribe(url: str, *events: str) -> WebhookEndpoint:
    return WebhookEndpoint.objects.create(url=url, events=list(events or WebhookEvent.values))


def verified(endpoint: WebhookEndpoint, request: dict) -> dict:
    return Webhook(endpoint.secret).verify(request["body"], request["headers"])


@pytest.fixture(autouse=True)
def quick_retries(settings):
    settings.WEBHOOK_RETRY_SECONDS = [0]
    settings.WEBHOOK_TIMEOUT_SECONDS = 5
    # The receivers listen on 127.0.0.1, as in development (tests/annotation/test_webhook_addresses.py
    # checks that such addresses are refused by default).
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True


def test_a_receiver_that_fails_twice_gets_the_same_signed_message_three_times():
    with receiver(500, 503, 200) as hooks:
        endpoint = subscribe(hooks.url)
        (delivery,) = webhook_event_emit(event_type=WebhookEvent.REPORT_READY, data={"agreement_report": 7})

    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.SUCCEEDED and delivery.delivered_at is not None
    assert [a.status_code for a in delivery.attempt_rows.all()] == [500, 503, 200]
    assert all(a.response_ms >= 0 for a in delivery.attempt_rows.all())
    assert {r["headers"]["webhook-id"] for r in hooks.requests} == {delivery.message_id}
    for request in hooks.requests:
        payload = verified(endpoint, request)
        assert payload["type"] == "agreement_report.ready" and payload["data"] == {"agreement_report": 7}


def test_a_delivered_message_is_never_sent_again():
    with receiver(200) as hooks:
        subscribe(hooks.url)
        (delivery,) = webhook_event_emit(event_type=WebhookEvent.EXPORT_READY, data={"dataset_export": 1})
        webhook_delivery_run(delivery_id=delivery.pk)  # a second message for the same delivery
        # A worker that died after the receiver's 200 but before it marked the delivery: the
        # stale sweep queues it again; the next worker finds the 200 and sends nothing.
        WebhookDelivery.objects.filter(pk=delivery.pk).update(status=WebhookDelivery.Status.QUEUED)
        webhook_delivery_run(delivery_id=delivery.pk)

    assert len(hooks.requests) == 1
    assert WebhookAttempt.objects.filter(delivery=delivery).count() == 1
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == WebhookDelivery.Status.SUCCEEDED


def test_a_receiver_that_never_answers_2xx_fails_the_delivery_after_the_last_attempt():
    with receiver(410) as hooks:
        subscribe(hooks.url)
        (delivery,) = webhook_event_emit(event_type=WebhookEvent.IMPORT_FINISHED, data={})

    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert len(hooks.requests) == WebhookDelivery.MAX_ATTEMPTS == delivery.attempt_rows.count()
    assert (
        delivery.error == f"no 2xx answer after {WebhookDelivery.MAX_ATTEMPTS} attempts; last attempt 8: answered 410"
    )


def test_a_redirect_is_not_followed_and_counts_as_a_failure():
    with receiver(302, 200) as hooks:
        subscribe(hooks.url)
        (delivery,) = webhook_event_emit(event_type=WebhookEvent.IMPORT_FINISHED, data={})

    assert [a.status_code for a in WebhookAttempt.objects.filter(delivery=delivery)] == [302, 200]


def test_no_answer_at_all_is_recorded_and_retried():
    with receiver(200) as hooks:
        dead_url = hooks.url
    endpoint = subscribe(dead_url)
    (delivery,) = webhook_event_emit(event_type=WebhookEvent.IMPORT_FINISHED, data={})

    attempts = list(WebhookAttempt.objects.filter(delivery=delivery))
    assert len(attempts) == WebhookDelivery.MAX_ATTEMPTS
    assert attempts[0].status_code is None and attempts[0].error.startswith("no answer")
    assert endpoint.deliveries.get().status == WebhookDelivery.Status.FAILED


def test_the_wait_between_attempts_follows_the_schedule(settings, django_capture_on_commit_callbacks):
    settings.WEBHOOK_RETRY_SECONDS = [120, 600]
    sent = []
    with receiver(500) as hooks:
        subscribe(hooks.url)
        from annotation.shared import jobs

        original = jobs._send
        jobs._send = lambda model, job_id, countdown=None: sent.append(countdown)
        try:
            (delivery,) = webhook_event_emit(event_type=WebhookEvent.IMPORT_FINISHED, data={})
            assert sent == [None]  # the first attempt goes at once
            webhook_delivery_run(delivery_id=delivery.pk)
        finally:
            jobs._send = original

    delivery.refresh_from_db()
    assert sent == [None, 120.0]
    assert delivery.status == WebhookDelivery.Status.QUEUED and "attempt 1: answered 500" in delivery.phase
    assert delivery.heartbeat_at > delivery.attempt_rows.get().sent_at  # not resent early by the stale sweep
    assert not delivery.is_silent()


def test_only_subscribed_active_endpoints_get_an_event():
    with receiver(200) as hooks:
        subscribe(hooks.url, WebhookEvent.LABEL_SET_FINALIZED)
        WebhookEndpoint.objects.create(url=hooks.url, events=[WebhookEvent.REPORT_READY], active=False)
        assert webhook_event_emit(event_type=WebhookEvent.REPORT_READY, data={}) == []
        webhook_event_emit(event_type=WebhookEvent.LABEL_SET_FINALIZED, data={"label_set": 1})

    assert [json.loads(r["body"])["type"] for r in hooks.requests] == ["label_set.finalized"]


def test_an_unknown_event_type_is_refused():
    with pytest.raises(ValueError, match=r"unknown webhook event type 'study\.exploded'"):
        webhook_event_emit(event_type="study.exploded", data={})


def test_a_forged_signature_does_not_verify():
    with receiver(200) as hooks:
        endpoint = subscribe(hooks.url)
        webhook_event_emit(event_type=WebhookEvent.IMPORT_FINISHED, data={})
    (request,) = hooks.requests
    forged = {**request, "body": request["body"].replace("import.finished", "import.failed")}
    with pytest.raises(WebhookVerificationError):
        verified(endpoint, forged)
    other = WebhookEndpoint(url=hooks.url)  # another endpoint's secret
    with pytest.raises(WebhookVerificationError):
        verified(other, request)


def test_a_job_kind_announces_how_its_jobs_end():
    with receiver(200) as hooks:
        endpoint = subscribe(hooks.url)
        succeeded = ImportJob.objects.create(corpus_name="c", archive_name="c.zip")
        job_run(model=ImportJob, job_id=succeeded.pk, work=lambda job, progress: {"summary": {"imported": 3}})
        failed = ImportJob.objects.create(corpus_name="c", archive_name="d.zip")
        job_run(model=ImportJob, job_id=failed.pk, work=lambda job, progress: 1 / 0)

    events = [verified(endpoint, r) for r in hooks.requests]
    assert [(e["type"], e["data"]["import_job"], e["data"]["status"]) for e in events] == [
        ("import.finished", succeeded.pk, "succeeded"),
        ("import.failed", failed.pk, "failed"),
    ]
    assert events[0]["data"]["summary"] == {"imported": 3}


def test_a_study_announces_once_that_every_clip_has_its_target():
    study = live_study(clips=2, clips_per_task=2, target_annotations=1)
    with receiver(200) as hooks:
        endpoint = subscribe(hooks.url, WebhookEvent.STUDY_TARGET_REACHED)
        participant = ready_participant(study)
        task = assignment_claim(participant=participant)
        for _ in range(2):
            item = first_pending(task)
            listened(item)
            annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=marks(item, 1), mismatch=False)

    (request,) = hooks.requests
    assert verified(endpoint, request)["data"]["study"] == study.pk
    study.refresh_from_db()
    assert study.target_reached_at is not None


def test_the_admin_subscribes_an_endpoint_and_shows_each_attempt(client):
    get_user_model().objects.create_superuser("boss", "boss@example.com", "a long admin password")
    client.login(username="boss", password="a long admin password")
    with receiver(500, 200) as hooks:
        response = client.post(
            reverse("admin:annotation_webhookendpoint_add"),
            {"url": hooks.url, "description": "lab pipeline", "events": ["dataset_export.ready"], "active": "on"},
        )
        assert response.status_code == 200, response.content.decode()
        endpoint = WebhookEndpoint.objects.get()
        assert endpoint.events == ["dataset_export.ready"] and endpoint.secret.startswith("whsec_")
        assert endpoint.secret in response.content.decode()  # shown this once (tests/annotation/test_admin_secrets.py)
        (delivery,) = webhook_event_emit(event_type=WebhookEvent.EXPORT_READY, data={"dataset_export": 3})

    assert verified(endpoint, hooks.requests[-1])["data"] == {"dataset_export": 3}
    page = client.get(reverse("admin:annotation_webhookdelivery_change", args=[delivery.pk])).content.decode()
    assert delivery.message_id in page and "500" in page and "200" in page


@pytest.mark.worker
def test_a_real_worker_waits_the_backoff_between_attempts(settings, celery_worker, reads_never_block_the_worker):  # noqa: F811 (fixtures)
    settings.WEBHOOK_RETRY_SECONDS = [1, 2]
    with receiver(500, 500, 200) as hooks:
        endpoint = subscribe(hooks.url)
        (delivery,) = webhook_event_emit(event_type=WebhookEvent.BENCHMARK_RUN_FINISHED, data={"benchmark_run": 1})
        deadline = time.monotonic() + 30
        while WebhookDelivery.objects.get(pk=delivery.pk).status != WebhookDelivery.Status.SUCCEEDED:
            assert time.monotonic() < deadline, list(WebhookAttempt.objects.values_list("number", "status_code"))
            time.sleep(0.1)

    gaps = [later["at"] - earlier["at"] for earlier, later in zip(hooks.requests, hooks.requests[1:])]
    assert len(hooks.requests) == 3 and gaps[0] >= 1 and gaps[1] >= 2
    assert all(verified(endpoint, r)["data"] == {"benchmark_run": 1} for r in hooks.requests)
    assert [d["task"] for d in celery_worker.deliveries] == ["annotation.webhook_delivery_run"] * 3


def test_the_job_kinds_that_announce_their_end():
    from annotation.shared.jobs import job_kinds

    assert {model._meta.label: model.WEBHOOK_EVENTS for model in job_kinds() if model.WEBHOOK_EVENTS} == {
        "annotation.ImportJob": {"succeeded": "import.finished", "failed": "import.failed"},
        "evaluation.AgreementReport": {"succeeded": "agreement_report.ready"},
        "evaluation.DatasetExport": {"succeeded": "dataset_export.ready"},
        "modelzoo.BenchmarkRun": {"succeeded": "benchmark_run.finished", "failed": "benchmark_run.failed"},
    }


def test_a_job_failed_by_the_stale_sweep_or_a_cancel_announces_it():
    from datetime import timedelta

    from django.utils import timezone

    from annotation.shared.jobs import job_fail_unattended, stale_jobs_requeue

    with receiver(200) as hooks:
        endpoint = subscribe(hooks.url, WebhookEvent.IMPORT_FAILED)
        cancelled = ImportJob.objects.create(corpus_name="c", archive_name="a.zip")
        assert job_fail_unattended(model=ImportJob, job_id=cancelled.pk, error="cancelled")
        long_ago = timezone.now() - ImportJob.STALE_AFTER - timedelta(minutes=1)
        lost = ImportJob.objects.create(
            corpus_name="c",
            archive_name="b.zip",
            status=ImportJob.Status.RUNNING,
            attempts=ImportJob.MAX_ATTEMPTS,
            heartbeat_at=long_ago,
        )
        assert stale_jobs_requeue(model=ImportJob)["failed"] == 1

    assert [verified(endpoint, r)["data"]["import_job"] for r in hooks.requests] == [cancelled.pk, lost.pk]


def test_an_answer_that_is_not_http_is_recorded_and_retried():
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]

        def garble():
            for _ in range(WebhookDelivery.MAX_ATTEMPTS):
                connection, _ = server.accept()
                with connection:
                    connection.recv(65536)
                    connection.sendall(b"this is not HTTP\r\n\r\n")

        thread = threading.Thread(target=garble, daemon=True)
        thread.start()
        subscribe(f"http://127.0.0.1:{port}/hooks")
        (delivery,) = webhook_event_emit(event_type=WebhookEvent.IMPORT_FINISHED, data={})
        thread.join(timeout=30)

    attempts = list(WebhookAttempt.objects.filter(delivery=delivery))
    assert len(attempts) == WebhookDelivery.MAX_ATTEMPTS
    assert attempts[0].status_code is None and attempts[0].error.startswith("no readable answer: BadStatusLine")
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == WebhookDelivery.Status.FAILED


def test_the_signing_secret_is_not_shown_to_who_may_view_the_endpoint(client):
    from django.contrib.auth.models import Permission, User

    endpoint = subscribe("https://example.org/hooks")
    viewer = User.objects.create_user("viewer", password="x", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_webhookendpoint"))
    client.force_login(viewer)
    page = client.get(reverse("admin:annotation_webhookendpoint_change", args=[endpoint.pk]))

    assert page.status_code == 200 and endpoint.url in page.content.decode()
    assert endpoint.secret not in page.content.decode()
