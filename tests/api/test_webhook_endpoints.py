"""/api/v1/webhook-endpoints/ (issue 30): endpoints registered by script with the admin's checks (an
http(s) URL at a public address, at least one known event), the signing secret in the create's
answer only, the model permissions of each method, and a signed delivery to what was registered."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standardwebhooks import Webhook

from annotation.models import WebhookEndpoint, WebhookEvent
from annotation.services.webhooks import webhook_event_emit
from tests.api.callers import staff_with, token_client

pytestmark = pytest.mark.django_db
URL = "/api/v1/webhook-endpoints/"
ALL = tuple(f"annotation.{verb}_webhookendpoint" for verb in ("view", "add", "change", "delete"))


@pytest.fixture(autouse=True)
def hooks_example_is_public(public_dns):
    """hooks.example resolves to a public address (tests/conftest.py)."""


def test_a_registered_endpoint_answers_its_secret_once():
    client = token_client(staff_with(*ALL))

    created = client.post(URL, {"url": "https://hooks.example/in", "events": ["import.finished"]}, format="json")

    assert created.status_code == 201, created.json()
    body = created.json()
    endpoint = WebhookEndpoint.objects.get()
    assert body["secret"] == endpoint.secret and body["secret"].startswith("whsec_")
    assert body["events"] == ["import.finished"] and body["active"] is True
    shown = [client.get(f"{URL}{endpoint.pk}/").json(), client.get(URL).json()["results"][0]]
    for entry in shown:
        assert "secret" not in entry and entry["url"] == "https://hooks.example/in"
    changed = client.patch(f"{URL}{endpoint.pk}/", {"active": False}, format="json")
    assert changed.status_code == 200 and "secret" not in changed.json()


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1:6379/", "127.0.0.1 is a loopback address"),
        ("http://localhost:5432/", "localhost resolves to a loopback address"),
        ("http://[::1]:8000/", "::1 is a loopback address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("http://192.168.0.1/admin", "192.168.0.1 is a private address"),
        ("file:///etc/passwd", "Enter a valid URL."),
    ],
)
def test_an_endpoint_at_an_address_that_is_not_public_is_refused_and_nothing_written(url, says):
    client = token_client(staff_with(*ALL))

    response = client.post(URL, {"url": url, "events": ["import.finished"]}, format="json")

    assert response.status_code == 400 and not WebhookEndpoint.objects.exists()
    assert any(message.startswith(says) for message in response.json()["url"]), response.json()


def test_a_change_to_a_private_address_is_refused_too():
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example/in", events=["import.finished"])
    client = token_client(staff_with(*ALL))

    response = client.patch(f"{URL}{endpoint.pk}/", {"url": "http://10.0.0.8/in"}, format="json")

    assert response.status_code == 400 and "10.0.0.8 is a private address" in response.json()["url"][0]
    assert WebhookEndpoint.objects.get().url == "https://hooks.example/in"


def test_events_must_be_known_and_at_least_one():
    client = token_client(staff_with(*ALL))

    none = client.post(URL, {"url": "https://hooks.example/in", "events": []}, format="json")
    unknown = client.post(URL, {"url": "https://hooks.example/in", "events": ["study.deleted"]}, format="json")

    assert none.status_code == 400 and "events" in none.json()
    assert unknown.status_code == 400 and '"study.deleted" is not a valid choice.' in str(unknown.json()["events"])
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize(
    ("method", "needs"),
    [("get", "view"), ("post", "add"), ("patch", "change"), ("delete", "delete")],
)
def test_each_method_needs_its_model_permission(method, needs):
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example/in", events=["import.finished"])
    others = [perm for perm in ALL if f".{needs}_" not in perm]
    target = URL if method == "post" else f"{URL}{endpoint.pk}/"
    body = {"url": "https://hooks.example/other", "events": ["import.failed"]}

    refused = getattr(token_client(staff_with(*others)), method)(target, body, format="json")
    allowed = getattr(token_client(staff_with(f"annotation.{needs}_webhookendpoint")), method)(
        target, body, format="json"
    )

    assert refused.status_code == 403
    assert allowed.status_code in (200, 201, 204)


@pytest.mark.django_db(transaction=True)
def test_an_endpoint_registered_by_script_gets_signed_deliveries(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True  # the receiver runs on this machine, as in development
    requests: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"])).decode()
            requests.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = token_client(staff_with(*ALL))
        url = f"http://127.0.0.1:{server.server_port}/in"
        created = client.post(URL, {"url": url, "events": ["dataset_export.ready"]}, format="json").json()
        webhook_event_emit(event_type=WebhookEvent.EXPORT_READY, data={"dataset_export": 5})
    finally:
        server.shutdown()
        server.server_close()

    (request,) = requests
    assert Webhook(created["secret"]).verify(request["body"], request["headers"])["data"] == {"dataset_export": 5}
