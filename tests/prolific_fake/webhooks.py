"""Prolific's webhooks as its API v1 documents them (rules.py: HOOK_SECRET, HOOK_SUBSCRIPTION,
HOOK_CONFIRM, WEBHOOK_SIGNATURE): a workspace secret, subscriptions confirmed with the
X-Hook-Secret of their creation, and events POSTed to each confirmed subscription, signed with
the workspace's secret. `event_send` is what Prolific does when a status changes."""

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
from tests.prolific_fake.server import not_found, route

EVENT_TYPES = ("study.status.change", "submission.status.change", "study.progress.change")
SUBSCRIPTION_FIELDS = {"workspace_id", "event_type", "target_url", "is_enabled"}


def _hooks(fake) -> dict:
    return fake.state.setdefault("hooks", {"secrets": {}, "subscriptions": {}, "sent": []})


@route("GET", r"hooks/event-types/")
def event_types(fake, request):
    return 200, {"results": list(EVENT_TYPES)}


@route("POST", r"hooks/secrets/")
def secret_create(fake, request):
    body = request.body
    if not body.get("workspace_id") or set(body) - {"workspace_id"}:
        raise rules.HOOK_SECRET.broken({"workspace_id": ["This field is required; nothing else is."]})
    # One active secret per workspace: a new one replaces the old.
    secret = {"id": fake.new_id(), "value": secrets.token_urlsafe(32), "workspace_id": body["workspace_id"]}
    _hooks(fake)["secrets"][body["workspace_id"]] = secret
    return 201, copy.deepcopy(secret)


@route("GET", r"hooks/secrets/")
def secrets_list(fake, request):
    return 200, {"results": [copy.deepcopy(s) for s in _hooks(fake)["secrets"].values()]}


@route("POST", r"hooks/subscriptions/")
def subscription_create(fake, request):
    body = request.body
    unknown = sorted(set(body) - SUBSCRIPTION_FIELDS)
    if unknown:
        raise rules.UNKNOWN_FIELDS.broken({name: ["Unknown field."] for name in unknown})
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


@route("POST", r"hooks/subscriptions/(?P<id>[^/]+)/")
def subscription_confirm(fake, request):
    subscription = _hooks(fake)["subscriptions"].get(request.params["id"])
    if subscription is None:
        raise not_found("subscription")
    if request.body.get("secret") != subscription["hook_secret"]:
        raise rules.HOOK_CONFIRM.broken({"secret": ["This is not the X-Hook-Secret of the subscription."]})
    subscription["confirmed"] = True
    return 200, _shown(subscription)


@route("GET", r"hooks/subscriptions/")
def subscriptions_list(fake, request):
    return 200, {"results": [_shown(s) for s in _hooks(fake)["subscriptions"].values()]}


def _shown(subscription: dict) -> dict:
    return {key: subscription[key] for key in ("id", "event_type", "target_url", "workspace_id", "is_enabled")}


def signed(secret: str, body: bytes, timestamp: str) -> str:
    """WEBHOOK_SIGNATURE: base64 of HMAC-SHA256 over the timestamp and the body."""
    return base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()).decode()


def event_send(fake, event: dict) -> list[tuple[str, int]]:
    """POST the event to every confirmed, enabled subscription of its type: [(url, answer status)]."""
    hooks = _hooks(fake)
    with fake.lock:
        targets = [
            (s["target_url"], hooks["secrets"][s["workspace_id"]]["value"])
            for s in hooks["subscriptions"].values()
            if s["event_type"] == event["event_type"] and s["confirmed"] and s["is_enabled"]
        ]
    answers = []
    body = json.dumps(event).encode()
    event_id = fake.new_id()  # one id per event, the same on every redelivery
    for url, secret in targets:
        timestamp = str(int(time.time()))
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "X-Prolific-Request-Signature": signed(secret, body, timestamp),
                "X-Prolific-Request-Timestamp": timestamp,
                "X-Event-ID": event_id,
                "X-Timestamp": timestamp,
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                status = answer.status
        except urllib.error.HTTPError as error:
            status = error.code
        hooks["sent"].append({"url": url, "event": event, "status": status, "event_id": event_id})
        answers.append((url, status))
    return answers
