"""Webhooks out go to public addresses only (issue 30; annotation/public_addresses.py): an endpoint at
a loopback, private, link-local or reserved address is refused when registered (admin and API, in
tests/api/test_webhook_endpoints.py) and again when an attempt connects, after a fresh DNS lookup
(DNS rebinding); the delivery log then shows that it was refused and nothing of what the address
would have answered. WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true allows them, for development.

Names are resolved by a stand-in for socket.getaddrinfo that answers for the .example names below
(RFC 2606) and passes every other name to the real resolver."""

import socket
import subprocess
import sys
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from annotation.public_addresses import address_kind, url_problem
from annotation.services.webhooks import webhook_event_emit

PUBLIC = "93.184.215.14"  # a global unicast address (example.org's); nothing here connects to it
REAL_GETADDRINFO = socket.getaddrinfo


@pytest.fixture
def dns(monkeypatch):
    """name -> list of addresses, changed by the test as it goes (a rebinding attacker's DNS)."""
    answers: dict[str, list[str]] = {}

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host not in answers:
            return REAL_GETADDRINFO(host, port, family, type, proto, flags)
        return [
            (socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))
            for address in answers[host]
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


@contextmanager
def listening_receiver(status: int = 200):
    """A receiver on 127.0.0.1 that answers `status` and keeps what reached it."""
    reached: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            reached.append(self.path)
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_port, reached
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.8.9.10", "a loopback address"),
        ("::1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("192.168.1.1", "a private address"),
        ("fd12:3456::1", "a private address"),
        ("169.254.169.254", "a link-local address"),  # the cloud metadata service
        ("fe80::1%eth0", "a link-local address"),
        ("100.64.0.1", "not a public address"),  # carrier-grade NAT, shared
        ("224.0.0.1", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("::ffff:127.0.0.1", "a loopback address"),  # IPv4-mapped
        ("2002:7f00:1::", "a loopback address"),  # 6to4 around 127.0.0.1
        ("2002:a00:1::", "a private address"),  # 6to4 around 10.0.0.1
        ("64:ff9b::a00:1", "a private address"),  # NAT64 around 10.0.0.1
        (PUBLIC, None),
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_which_addresses_are_public(address, kind):
    assert address_kind(address) == kind


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://127.0.0.1:8000/hooks", "127.0.0.1 is a loopback address"),
        ("http://[::1]/hooks", "::1 is a loopback address"),
        ("http://localhost/hooks", "localhost resolves to a loopback address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("https://intranet.example/hooks", "intranet.example resolves to a private address"),
        ("https://mixed.example/hooks", "mixed.example resolves to a private address"),
        ("ftp://hooks.example/x", "must be an http:// or https:// URL"),
        ("https://nowhere.invalid/hooks", "nowhere.invalid does not resolve"),
    ],
)
def test_a_url_at_an_address_that_is_not_public_is_refused_with_its_reason(dns, url, problem):
    dns.update({"intranet.example": ["10.20.30.40"], "mixed.example": [PUBLIC, "10.20.30.40"]})

    found = url_problem(url)

    assert found is not None and found.startswith(problem)
    assert "10.20.30.40" not in found  # a name's internal address is not told back


def test_a_public_name_passes(dns):
    dns["hooks.example"] = [PUBLIC]
    assert url_problem("https://hooks.example/in") is None


def test_the_setting_allows_private_addresses_for_development(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    assert url_problem("http://127.0.0.1:8000/hooks") is None


@pytest.mark.django_db
def test_the_admin_refuses_a_loopback_endpoint_and_writes_nothing(client):
    client.force_login(User.objects.create_superuser("boss", "", "a long admin password"))

    response = client.post(
        reverse("admin:annotation_webhookendpoint_add"),
        {"url": "http://127.0.0.1:6379/", "description": "", "events": ["import.finished"], "active": "on"},
    )

    assert response.status_code == 200 and not WebhookEndpoint.objects.exists()
    assert "127.0.0.1 is a loopback address" in " ".join(response.context["adminform"].form.errors["url"])


@pytest.mark.django_db(transaction=True)  # deliveries are sent once their rows commit
@pytest.mark.parametrize("listening", [True, False], ids=["a receiver answers", "nothing listens"])
def test_a_name_rebound_to_loopback_after_registration_is_refused_at_connection(dns, settings, listening):
    """Registered while it resolved to a public address; by the time the worker connects, the
    attacker's DNS answers 127.0.0.1. Nothing reaches the receiver there, and the log reads the
    same whether something listens or not."""
    settings.WEBHOOK_RETRY_SECONDS = [0]
    dns["rebound.example"] = [PUBLIC]
    with listening_receiver(200) as (port, reached):
        url = f"http://rebound.example:{port if listening else 9}/hooks"
        assert url_problem(url) is None
        WebhookEndpoint.objects.create(url=url, events=[WebhookEvent.IMPORT_FINISHED])
        dns["rebound.example"] = ["127.0.0.1"]

        (delivery,) = webhook_event_emit(event_type=WebhookEvent.IMPORT_FINISHED, data={})

    assert reached == []
    attempts = list(WebhookAttempt.objects.filter(delivery=delivery))  # eager tasks retry at once
    assert len(attempts) == WebhookDelivery.MAX_ATTEMPTS
    assert {(attempt.status_code, attempt.error) for attempt in attempts} == {
        (
            None,
            "refused: rebound.example resolves to a loopback address; webhooks go to public addresses only "
            "(WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true allows others, for development)",
        )
    }
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.FAILED and "refused: rebound.example" in delivery.error


@pytest.mark.django_db(transaction=True)
def test_with_the_setting_a_receiver_on_this_machine_gets_its_delivery(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    with listening_receiver(204) as (port, reached):
        WebhookEndpoint.objects.create(url=f"http://127.0.0.1:{port}/in", events=[WebhookEvent.IMPORT_FINISHED])
        (delivery,) = webhook_event_emit(event_type=WebhookEvent.IMPORT_FINISHED, data={})

    assert reached == ["/in"] and WebhookAttempt.objects.get(delivery=delivery).status_code == 204


def test_a_bad_value_of_the_setting_stops_start_up_naming_it(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", "import config.settings"],
        env={
            "SECRET_KEY": "x",
            "DATA_DIR": str(tmp_path),
            "PATH": "/usr/bin:/bin",
            "WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "maybe",
        },
        capture_output=True,
        text=True,
    )

    assert result.returncode != 0
    assert "ImproperlyConfigured: WEBHOOK_ALLOW_PRIVATE_ADDRESSES must be true or false, not 'maybe'" in result.stderr
