"""Prolific's webhooks as its API v1 documents them (rules.py: HOOK_SECRET, HOOK_SUBSCRIPTION,
HOOK_CONFIRM, WEBHOOK_PAYLOAD, WEBHOOK_SIGNATURE, WEBHOOK_EVENT_ID, WEBHOOK_ORDER, WEBHOOK_RETRIES): a
workspace secret, subscriptions confirmed with the X-Hook-Secret of their creation, and events POSTed
to each confirmed subscription, signed with the workspace's secret, with one X-Event-ID per event and
the X-Timestamp of when it was first sent. `event_send` is what Prolific does when a status changes;
`redeliver` is one of its retries of an event (the same X-Event-ID and X-Timestamp, signed anew)."""

import base64
import copy
import hashlib
import hmac
import json
import secrets
import time
import urllib.error
import urllib.request

from tests.prolific_fake import rules
from tests.prolific_fake.server import known_fields, not_found, route

EVENT_TYPES = ("study.status.change", "submission.status.change", "study.progress.change")
SUBSCRIPTION_FIELDS = {"workspace_id", "event_type", "target_url", "is_enabled"}


def _hooks(fake) -> dict:
    return fake.state.setdefault("hooks", {"secrets": {}, "subscriptions": {}, "sent": []})


@route("GET", r"hooks/event-types/", page=f"{rules.WEBHOOKS}/get-event-types")
def event_types(fake, request):
    return 200, {"results": list(EVENT_TYPES)}


@route("POST", r"hooks/secrets/", page=f"{rules.WEBHOOKS}/create-secret")
def secret_create(fake, request):
    body = request.body
    if not body.get("workspace_id") or set(body) - {"workspace_id"}:
        raise rules.HOOK_SECRET.broken({"workspace_id": ["This field is required; nothing else is."]})
    # One active secret per workspace: a new one replaces the old.
    secret = {"id": fake.new_id(), "value": secrets.token_urlsafe(32), "workspace_id": body["workspace_id"]}
    _hooks(fake)["secrets"][body["workspace_id"]] = secret
    return 201, copy.deepcopy(secret)


@route("GET", r"hooks/secrets/", page=f"{rules.WEBHOOKS}/get-secrets", query=("workspace_id",))
def secrets_list(fake, request):
    return 200, {"results": [copy.deepcopy(s) for s in _hooks(fake)["secrets"].values()]}


@route("POST", r"hooks/subscriptions/", page=f"{rules.WEBHOOKS}/create-subscription")
def subscription_create(fake, request):
    body = request.body
    known_fields(body, SUBSCRIPTION_FIELDS)
    missing = [name for name in ("workspace_id", "event_type", "target_url") if not body.get(name)]
    if missing:
        raise rules.HOOK_SUBSCRIPTION.broken({name: ["This field is required."] for name in missing})
    if body["event_type"] not in EVENT_TYPES:
        raise rules.HOOK_SUBSCRIPTION.broken({"event_type": [f"{body['event_type']!r} is not an event type."]})
    if not body["target_url"].startswith("https://") and not fake.state.get("allow_http_targets"):
        raise rules.HOOK_SUBSCRIPTION.broken({"target_url": ["The target URL must use https://."]})
    if body["workspace_id"] not in _hooks(fake)["secrets"]:
        raise rules.HOOK_SUBSCRIPTION.broken({"workspace_id": ["Create a secret for the workspace first."]})
    subscription = {
        "id": fake.new_id(),
        "event_type": body["event_type"],
        "target_url": body["target_url"],
        "workspace_id": body["workspace_id"],
        "is_enabled": body.get("is_enabled", True),
        "confirmed": False,
        "hook_secret": secrets.token_hex(16),
    }
    _hooks(fake)["subscriptions"][subscription["id"]] = subscription
    return 201, {"results": [_shown(subscription)]}, {"X-Hook-Secret": subscription["hook_secret"]}


@route("POST", r"hooks/subscriptions/(?P<id>[^/]+)/", page=f"{rules.WEBHOOKS}/confirm-subscription")
def subscription_confirm(fake, request):
    subscription = _hooks(fake)["subscriptions"].get(request.params["id"])
    if subscription is None:
        raise not_found("subscription")
    known_fields(request.body, {"secret"})
    if request.body.get("secret") != subscription["hook_secret"]:
        raise rules.HOOK_CONFIRM.broken({"secret": ["This is not the X-Hook-Secret of the subscription."]})
    subscription["confirmed"] = True
    return 200, _shown(subscription)


@route(
    "GET",
    r"hooks/subscriptions/",
    page=f"{rules.WEBHOOKS}/get-subscriptions",
    query=("workspace_id", "is_enabled", "limit", "offset"),
)
def subscriptions_list(fake, request):
    return 200, {"results": [_shown(s) for s in _hooks(fake)["subscriptions"].values()]}


def _shown(subscription: dict) -> dict:
    return {key: subscription[key] for key in ("id", "event_type", "target_url", "workspace_id", "is_enabled")}


def signed(secret: str, body: bytes, timestamp: str) -> str:
    """WEBHOOK_SIGNATURE: base64 of HMAC-SHA256 over the timestamp and the body."""
    return base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()).decode()


def event_send(fake, event: dict) -> list[tuple[str, int]]:
    """POST the event to every confirmed, enabled subscription of its type: [(url, answer status)].
    The event gets its X-Event-ID and X-Timestamp here, once (fake.state["hooks"]["events"])."""
    event_id = fake.new_id()
    with fake.lock:
        _hooks(fake).setdefault("events", {})[event_id] = {"event": event, "timestamp": str(int(time.time()))}
    return redeliver(fake, event_id)


def redeliver(fake, event_id: str, *, resign: bool = True, body: bytes | None = None) -> list[tuple[str, int]]:
    """One more delivery of the event to every subscription of its type: the same X-Event-ID and
    X-Timestamp, a new X-Prolific-Request-Timestamp and signature (`resign=False`: the first
    attempt's bytes again, as a replay). `body` replaces the JSON body (a test of odd payloads)."""
    hooks = _hooks(fake)
    with fake.lock:
        known = hooks["events"][event_id]
        targets = [
            (s["target_url"], hooks["secrets"][s["workspace_id"]]["value"])
            for s in hooks["subscriptions"].values()
            if s["event_type"] == known["event"]["event_type"] and s["confirmed"] and s["is_enabled"]
        ]
        attempts = sum(1 for sent in hooks["sent"] if sent["event_id"] == event_id) // max(1, len(targets))
    if attempts >= rules.WEBHOOK_MAX_ATTEMPTS:
        raise AssertionError(f"{rules.WEBHOOK_RETRIES.source}: at most {rules.WEBHOOK_MAX_ATTEMPTS} attempts")
    payload = json.dumps(known["event"]).encode() if body is None else body
    answers = []
    for url, secret in targets:
        headers = _signed_headers(known, url, secret, payload, resign=resign)
        headers.update({"X-Event-ID": event_id, "X-Timestamp": known["timestamp"]})
        status = _post(url, payload, headers)
        hooks["sent"].append(
            {"url": url, "event": known["event"], "status": status, "event_id": event_id, "headers": headers}
        )
        answers.append((url, status))
    return answers


def _signed_headers(known: dict, url: str, secret: str, payload: bytes, *, resign: bool) -> dict:
    """Signed now, or (`resign=False`) with the first attempt's timestamp and signature."""
    first = known.setdefault("first_signature", {})
    if resign or url not in first:
        timestamp = str(int(time.time()))
        signature = signed(secret, payload, timestamp)
        first.setdefault(url, (timestamp, signature))
    else:
        timestamp, signature = first[url]
    return {
        "Content-Type": "application/json",
        "X-Prolific-Request-Signature": signature,
        "X-Prolific-Request-Timestamp": timestamp,
    }


def _post(url: str, payload: bytes, headers: dict) -> int:
    request = urllib.request.Request(url, data=payload, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0  # no answer: a connection issue, retried as a failure (WEBHOOK_RETRIES)


def events_sent(fake) -> list[dict]:
    """Every delivery attempt: url, event, status, event_id, headers."""
    return copy.deepcopy(_hooks(fake)["sent"])
