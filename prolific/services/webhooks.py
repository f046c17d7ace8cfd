"""Prolific's webhooks in: `submission.status.change` and `study.status.change`, verified by their
signature (prolific.signature) and taken once; subscribing them from the admin.

Refused, changing nothing: a request without a valid signature of the workspace's secret, one signed
outside PROLIFIC_WEBHOOK_TOLERANCE_SECONDS of our clock, and a replay (the same signed timestamp and
signature as one received already). A redelivery by Prolific (the same X-Event-ID, newly signed) is
acknowledged and changes nothing either: Prolific delivers at least once and retries what is not
answered 2xx.
"""

import json
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db import IntegrityError, transaction

from prolific.client import ProlificClient, ProlificError
from prolific.models.study import ProlificStudy
from prolific.models.submissions import (
    ProlificSubmissionStatus,
    ProlificWebhookReceipt,
    ProlificWebhookSecret,
    ProlificWebhookSubscription,
)
from prolific.services.studies import ProlificSetupError, prolific_study_sync
from prolific.services.submissions import prolific_submission_record
from prolific.signature import (
    EVENT_ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    SignatureRefused,
    signature_check,
)

SUBMISSION_STATUS_CHANGE = "submission.status.change"
STUDY_STATUS_CHANGE = "study.status.change"
SUBSCRIBED_EVENTS = (SUBMISSION_STATUS_CHANGE, STUDY_STATUS_CHANGE)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answer:
    status: int
    message: str


def webhook_secrets() -> list[str]:
    """The secrets a webhook may be signed with: the setting's, and the newest one Prolific gave
    the admin's subscribing (the workspace has one active secret at a time)."""
    stored = ProlificWebhookSecret.objects.values_list("secret", flat=True).first()
    return [s for s in (settings.PROLIFIC_WEBHOOK_SECRET, stored) if s]


def prolific_webhook_receive(*, headers, body: bytes, now: float | None = None) -> Answer:
    """Verify, then take the webhook once. `headers`: the request's (case-insensitive mapping)."""
    try:
        signed_at = signature_check(
            secrets=webhook_secrets(),
            signature=headers.get(SIGNATURE_HEADER, ""),
            timestamp=headers.get(TIMESTAMP_HEADER, ""),
            body=body,
            now=time.time() if now is None else now,
            tolerance=settings.PROLIFIC_WEBHOOK_TOLERANCE_SECONDS,
        )
    except SignatureRefused as refused:
        return Answer(401, f"refused: {refused}")
    try:
        event = json.loads(body)
        event_type, resource_id = event["event_type"], str(event["resource_id"])
    except (ValueError, TypeError, KeyError) as error:
        return Answer(400, f"refused: not a Prolific event ({type(error).__name__}: {error})")
    receipt = ProlificWebhookReceipt(
        event_id=headers.get(EVENT_ID_HEADER) or None,
        signature=headers[SIGNATURE_HEADER],
        signed_at=datetime.fromtimestamp(signed_at, tz=UTC),
        event_type=event_type,
        resource_id=resource_id,
        status=str(event.get("status", ""))[:40],
        payload=event,
    )
    return _take_once(receipt, event)


def _take_once(receipt: ProlificWebhookReceipt, event: dict) -> Answer:
    if ProlificWebhookReceipt.objects.filter(signature=receipt.signature).exists():
        return Answer(409, "refused: a replay of a webhook received already")
    if receipt.event_id and ProlificWebhookReceipt.objects.filter(event_id=receipt.event_id).exists():
        return Answer(200, "already received: nothing done again")
    try:
        with transaction.atomic():
            receipt.outcome = _act(receipt, event)
            receipt.save()  # its unique keys: two copies at once, one is taken and the other undone
    except IntegrityError:
        return Answer(409, "refused: a replay of a webhook received already")
    return Answer(200, receipt.outcome)


def _act(receipt: ProlificWebhookReceipt, event: dict) -> str:
    if receipt.event_type == SUBMISSION_STATUS_CHANGE:
        if receipt.status not in ProlificSubmissionStatus.values:
            return f"submission status {receipt.status!r} unknown here: recorded only"
        record = prolific_submission_record(
            submission_id=receipt.resource_id,
            status=receipt.status,
            at=receipt.signed_at,
            source="webhook",
            prolific_pid=str(event.get("participant_id", "")),
        )
        return f"released task {record.released_task}" if record.released_now else "submission status recorded"
    if receipt.event_type == STUDY_STATUS_CHANGE:
        return _study_status_follow(receipt.resource_id)
    return "event type not subscribed here: recorded only"


def _study_status_follow(prolific_id: str) -> str:
    """Ours mirrors the study as Prolific has it now: read from Prolific rather than taken from the
    event, which may come out of order (prolific.services.studies.prolific_study_sync).
    Reading it may fail (Prolific does not answer, PROLIFIC_API_TOKEN is not set): the receipt is
    kept with the reason, the webhook is still answered 2xx, and the poll follows the study."""
    prolific_study = ProlificStudy.objects.filter(prolific_id=prolific_id).select_related("study").first()
    if prolific_study is None:
        return "study status recorded: no study of ours runs as it"
    try:
        prolific_study = prolific_study_sync(prolific_study=prolific_study)
    except (ProlificError, ProlificSetupError) as error:
        logger.warning("study.status.change for %s: reading the study from Prolific failed: %s", prolific_id, error)
        return f"study status recorded; reading the study from Prolific failed ({error}): the poll follows it"
    return f"study {prolific_study.study_id} follows Prolific: {prolific_study.status}"


def prolific_webhooks_subscribe(*, client: ProlificClient, workspace_id: str, target_url: str) -> list:
    """Create the workspace's secret, subscribe both event types to `target_url` and confirm each
    subscription with the X-Hook-Secret Prolific answered (docs.prolific.com, Webhooks > Subscribing)."""
    if not target_url.startswith("https://") and not settings.PROLIFIC_WEBHOOK_ALLOW_HTTP:
        raise ValueError(f"Prolific only calls https:// addresses: {target_url!r}")
    secret = client.hook_secret_create(workspace_id=workspace_id)
    ProlificWebhookSecret.objects.create(workspace_id=workspace_id, secret=secret["value"])
    made = []
    for event_type in SUBSCRIBED_EVENTS:
        subscription, hook_secret = client.hook_subscription_create(
            workspace_id=workspace_id, event_type=event_type, target_url=target_url
        )
        client.hook_subscription_confirm(subscription_id=subscription["id"], secret=hook_secret)
        made.append(
            ProlificWebhookSubscription.objects.update_or_create(
                subscription_id=subscription["id"],
                defaults={
                    "workspace_id": workspace_id,
                    "event_type": event_type,
                    "target_url": target_url,
                    "confirmed": True,
                },
            )[0]
        )
    return made
