"""Prolific's webhooks in: `submission.status.change` and `study.status.change`, verified by their
signature (prolific.signature), stored once, answered at once, and acted on by a background job
(ProlificWebhookJob); subscribing them from the admin.

As Prolific delivers them (docs.prolific.com/api-reference/webhooks): at least once, retried up to
11 more times over 24 h while not answered 2xx, each event with one X-Event-ID on every delivery and
an X-Timestamp of when it was sent, in no guaranteed order. So:

- a request not signed with the workspace's secret is refused (401), changing nothing;
- a delivery of an event received already (the same X-Event-ID, or the same signature: a replay) is
  acknowledged with 200 and changes nothing, whatever its age;
- a new event signed further than PROLIFIC_WEBHOOK_TOLERANCE_SECONDS from our clock is refused (401);
- headers or a body that are not Prolific's (an X-Event-ID longer than any id, a body that is not a
  JSON object of the documented fields, nested deeper than any event) are refused with 400 naming
  the problem, nothing written;
- otherwise the event is stored with a job, and answered 200: the job records a submission's status
  (ordered by X-Timestamp: an older statement than the one known changes nothing) or reads the study
  from Prolific again, retrying while Prolific does not answer.
"""

import json
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import CharField

from annotation.shared.jobs import JobFailed, JobRetry, job_enqueue, job_run
from prolific.client import ProlificClient, ProlificError
from prolific.models.study import ProlificStudy
from prolific.models.submissions import (
    ProlificSubmissionStatus,
    ProlificWebhookJob,
    ProlificWebhookReceipt,
    ProlificWebhookSecret,
    ProlificWebhookSubscription,
)
from prolific.services.studies import ProlificSetupError, prolific_study_sync
from prolific.services.submissions import prolific_submission_record
from prolific.signature import (
    EVENT_ID_HEADER,
    EVENT_TIMESTAMP_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    SignatureRefused,
    signature_check,
)

SUBMISSION_STATUS_CHANGE = "submission.status.change"
STUDY_STATUS_CHANGE = "study.status.change"
SUBSCRIBED_EVENTS = (SUBMISSION_STATUS_CHANGE, STUDY_STATUS_CHANGE)


def _stored_length(field: str) -> int:
    column = ProlificWebhookReceipt._meta.get_field(field)
    if not isinstance(column, CharField) or column.max_length is None:
        raise TypeError(f"ProlificWebhookReceipt.{field} must be a CharField with a max_length")
    return column.max_length


# The longest values stored (the receipt's columns); Prolific's ids are 24 characters.
MAX_EVENT_ID = _stored_length("event_id")
MAX_ID = _stored_length("resource_id")
MAX_EVENT_TYPE = _stored_length("event_type")
MAX_STATUS = _stored_length("status")
# An event is two levels deep at most ("metadata": {...}); a little room, and no more.
MAX_DEPTH = 8
STUDY_SYNC_RETRY_SECONDS = (30, 120, 600, 1800)
# Prolific retries an event "up to 11 additional times over a 24-hour period": a delivery is signed at
# most that long after the event was sent (with an hour's margin).
RETRIES_REACH_SECONDS = 25 * 3600

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answer:
    status: int
    message: str


class NotAnEvent(ValueError):
    """Why a signed request is not one of Prolific's events: the 400's message."""


def webhook_secrets() -> list[str]:
    """The secrets a webhook may be signed with: the setting's, and the newest one Prolific gave
    the admin's subscribing (the workspace has one active secret at a time)."""
    stored = ProlificWebhookSecret.objects.values_list("secret", flat=True).first()
    return [s for s in (settings.PROLIFIC_WEBHOOK_SECRET, stored) if s]


def prolific_webhook_receive(*, headers, body: bytes, now: float | None = None) -> Answer:
    """Verify, then store the webhook once and queue its job. `headers`: the request's
    (case-insensitive mapping). Answers at once: nothing here calls Prolific."""
    now = time.time() if now is None else now
    try:
        signed_at = signature_check(
            secrets=webhook_secrets(),
            signature=headers.get(SIGNATURE_HEADER, ""),
            timestamp=headers.get(TIMESTAMP_HEADER, ""),
            body=body,
            now=now,
            tolerance=None,  # the age is judged below, once a repeat has been acknowledged
        )
    except SignatureRefused as refused:
        return Answer(401, f"refused: {refused}")
    try:
        event_id = _event_id(headers)
        sent_at = _event_timestamp(headers, signed_at)
    except NotAnEvent as problem:
        return Answer(400, f"refused: {problem}")
    signature = headers[SIGNATURE_HEADER]
    if _received_already(event_id, signature):
        return Answer(200, "already received: nothing done again")
    if abs(now - signed_at) > settings.PROLIFIC_WEBHOOK_TOLERANCE_SECONDS:
        return Answer(401, f"refused: signed {round(now - signed_at)} s from now, outside the tolerance window")
    try:
        event = _event(body)
    except NotAnEvent as problem:
        return Answer(400, f"refused: not a Prolific event ({problem})")
    receipt = ProlificWebhookReceipt(
        event_id=event_id,
        signature=signature,
        signed_at=_moment(signed_at),
        sent_at=_moment(sent_at),
        event_type=event["event_type"],
        resource_id=event["resource_id"],
        status=event.get("status", ""),
        payload=event,
    )
    return _store_once(receipt)


def _event_id(headers) -> str | None:
    event_id = headers.get(EVENT_ID_HEADER) or None
    if event_id is not None and len(event_id) > MAX_EVENT_ID:
        raise NotAnEvent(f"{EVENT_ID_HEADER} is {len(event_id)} characters long; Prolific's are at most {MAX_EVENT_ID}")
    return event_id


def _event_timestamp(headers, signed_at: int) -> int:
    """X-Timestamp (when Prolific sent the event), or the signing time without one. It is not signed:
    it must lie between the retries' reach before the signing time and the signing time itself (an
    event is sent before any delivery of it is signed), so that no one can date an event ahead."""
    raw = headers.get(EVENT_TIMESTAMP_HEADER)
    if raw is None:
        return signed_at
    if not raw.isdigit() or len(raw) > 12:
        raise NotAnEvent(f"{EVENT_TIMESTAMP_HEADER} is not a UNIX timestamp: {raw[:40]!r}")
    sent_at = int(raw)
    earliest = signed_at - RETRIES_REACH_SECONDS
    if not earliest <= sent_at <= signed_at + settings.PROLIFIC_WEBHOOK_TOLERANCE_SECONDS:
        raise NotAnEvent(f"{EVENT_TIMESTAMP_HEADER} {sent_at} is not within the day before its signing ({signed_at})")
    return sent_at


def _moment(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def _received_already(event_id: str | None, signature: str) -> bool:
    seen = ProlificWebhookReceipt.objects.filter(signature=signature)
    if event_id:
        seen = seen | ProlificWebhookReceipt.objects.filter(event_id=event_id)
    return seen.exists()


def _event(body: bytes) -> dict:
    """The body as an event: a JSON object with the documented fields, as short as they are."""
    try:
        event = json.loads(body)
    except RecursionError:
        raise NotAnEvent(f"its JSON is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:
        raise NotAnEvent(f"not JSON: {error}") from None
    if not isinstance(event, dict):
        raise NotAnEvent("not a JSON object")
    if _depth(event) > MAX_DEPTH:
        raise NotAnEvent(f"its JSON is nested deeper than {MAX_DEPTH} levels")
    for field, longest in (("event_type", MAX_EVENT_TYPE), ("resource_id", MAX_ID)):
        value = event.get(field)
        if not isinstance(value, str) or not value or len(value) > longest:
            raise NotAnEvent(f"{field} must be a text of 1 to {longest} characters")
    status = event.get("status", "")
    if not isinstance(status, str) or len(status) > MAX_STATUS:
        raise NotAnEvent(f"status must be a text of at most {MAX_STATUS} characters")
    return event


def _depth(value) -> int:
    """How deeply a parsed JSON value nests (iteratively: no recursion on hostile input)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def _store_once(receipt: ProlificWebhookReceipt) -> Answer:
    try:
        with transaction.atomic():
            receipt.save()  # its unique keys: of two copies at once, one is stored
            job = ProlificWebhookJob.objects.create(receipt=receipt, total=1)
            job_enqueue(job)
    except IntegrityError:
        return Answer(200, "already received: nothing done again")
    return Answer(200, "received")


# --- the job --------------------------------------------------------------------------------------


def prolific_webhook_process_run(*, job_id: int) -> None:
    job_run(model=ProlificWebhookJob, job_id=job_id, work=_process)


def _process(job: ProlificWebhookJob, progress) -> dict:
    receipt = job.receipt
    progress(f"acting on {receipt.event_type}", 0, 1)
    outcome = _act(receipt, job)
    ProlificWebhookReceipt.objects.filter(pk=receipt.pk).update(outcome=outcome[:200])
    return {}


def _act(receipt: ProlificWebhookReceipt, job: ProlificWebhookJob) -> str:
    if receipt.event_type == SUBMISSION_STATUS_CHANGE:
        if receipt.status not in ProlificSubmissionStatus.values:
            return f"submission status {receipt.status!r} unknown here: recorded only"
        record = prolific_submission_record(
            submission_id=receipt.resource_id,
            status=receipt.status,
            at=receipt.ordered_at,
            source="webhook",
            prolific_pid=str(receipt.payload.get("participant_id", ""))[:64],
        )
        if record.status_at > receipt.ordered_at:
            return f"an older statement than the one known ({record.status} at {record.status_at}): changed nothing"
        return f"released task {record.released_task}" if record.released_now else "submission status recorded"
    if receipt.event_type == STUDY_STATUS_CHANGE:
        return _study_status_follow(receipt.resource_id, job)
    return "event type not subscribed here: recorded only"


def _study_status_follow(prolific_id: str, job: ProlificWebhookJob) -> str:
    """Ours mirrors the study as Prolific has it now: read from Prolific rather than taken from the
    event, which may come out of order (prolific.services.studies.prolific_study_sync). Prolific not
    answering is retried; the poll follows the study meanwhile."""
    prolific_study = ProlificStudy.objects.filter(prolific_id=prolific_id).select_related("study").first()
    if prolific_study is None:
        return "study status recorded: no study of ours runs as it"
    try:
        prolific_study = prolific_study_sync(prolific_study=prolific_study)
    except ProlificSetupError as error:  # no token: nothing to retry
        raise JobFailed(f"reading the study from Prolific: {error}") from None
    except ProlificError as error:
        logger.warning("study.status.change for %s: reading the study from Prolific failed: %s", prolific_id, error)
        if job.attempts >= ProlificWebhookJob.MAX_ATTEMPTS:
            raise JobFailed(f"reading the study from Prolific failed ({error}); the poll follows it") from None
        delay = STUDY_SYNC_RETRY_SECONDS[min(job.attempts, len(STUDY_SYNC_RETRY_SECONDS)) - 1]
        raise JobRetry(f"reading the study from Prolific failed ({error})", delay=delay) from None
    return f"study {prolific_study.study_id} follows Prolific: {prolific_study.status}"


# --- subscribing ----------------------------------------------------------------------------------


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
