"""Webhooks out: an event becomes one signed delivery per subscribed endpoint.

Deliveries run on the job runner. An attempt that gets no 2xx answer (an error status, a
redirect, a refused connection, a timeout) is recorded and retried after the next of
WEBHOOK_RETRY_SECONDS, up to WebhookDelivery.MAX_ATTEMPTS attempts; a 2xx answer ends it.
Never twice after a success: the runner's claim takes a delivery once, and an attempt first
looks for a recorded 2xx answer (a worker that died after the receiver answered but before the
delivery was marked delivered) and, finding one, sends nothing.
"""

import http.client
import json
import time
import urllib.error
import urllib.request
import uuid
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from standardwebhooks import Webhook

from annotation.models import Study, StudyItem
from annotation.models.background_job import BackgroundJob
from annotation.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from annotation.public_addresses import SCHEMES, AddressRefused, public_opener
from annotation.shared.jobs import JobFailed, JobRetry, job_enqueue, job_run

USER_AGENT = "emphasis-platform-webhooks"


def webhook_event_emit(*, event_type: str, data: dict) -> list[WebhookDelivery]:
    """Queue the event for every active endpoint subscribed to it (sent once this commits)."""
    if event_type not in WebhookEvent.values:
        raise ValueError(f"unknown webhook event type {event_type!r}")
    endpoints = [e for e in WebhookEndpoint.objects.filter(active=True) if event_type in e.events]
    if not endpoints:
        return []
    payload = {"type": event_type, "timestamp": timezone.now().isoformat(), "data": data}
    deliveries = []
    with transaction.atomic():
        for endpoint in endpoints:
            delivery = WebhookDelivery.objects.create(
                endpoint=endpoint, event_type=event_type, message_id=f"msg_{uuid.uuid4().hex}", payload=payload
            )
            job_enqueue(delivery)
            deliveries.append(delivery)
    return deliveries


def webhook_jobs_ended(*, model: type[BackgroundJob], job_ids: list[int], status: str) -> None:
    """The webhook event of jobs that ended so, for the kinds that name one (WEBHOOK_EVENTS). The job
    runner calls it (annotation/apps.py registers it with job_end_listen): the runner is below the
    services, so it cannot import this."""
    event_type = model.WEBHOOK_EVENTS.get(status)
    if not event_type:
        return
    for job in model._default_manager.filter(pk__in=job_ids):  # BackgroundJob is abstract: no `objects` to type
        webhook_event_emit(event_type=event_type, data=job.webhook_data())


def webhook_delivery_run(*, delivery_id: int) -> None:
    job_run(model=WebhookDelivery, job_id=delivery_id, work=_deliver)


def _deliver(delivery: WebhookDelivery, progress) -> dict:
    answered = delivery.attempt_rows.filter(status_code__gte=200, status_code__lt=300).first()
    if answered is not None:
        return {"delivered_at": answered.sent_at, "error": ""}
    progress("sending", 0, 1)
    attempt = _attempt(delivery)
    if attempt.succeeded:
        return {"delivered_at": attempt.sent_at, "error": ""}
    outcome = f"attempt {attempt.number}: {attempt.error or f'answered {attempt.status_code}'}"
    if delivery.attempts >= WebhookDelivery.MAX_ATTEMPTS:
        raise JobFailed(f"no 2xx answer after {delivery.attempts} attempts; last {outcome}")
    raise JobRetry(outcome, delay=retry_delay(delivery.attempts))


def retry_delay(attempts_made: int) -> float:
    """Seconds to wait after the given number of failed attempts (the last wait repeats)."""
    delays = settings.WEBHOOK_RETRY_SECONDS
    return float(delays[min(attempts_made, len(delays)) - 1])


def _attempt(delivery: WebhookDelivery) -> WebhookAttempt:
    body = json.dumps(delivery.payload, sort_keys=True, separators=(",", ":"))
    sent_at = timezone.now()
    headers = signed_headers(
        secret=delivery.endpoint.secret, message_id=delivery.message_id, sent_at=sent_at, body=body
    )
    started = time.monotonic()
    status_code, error = _post(delivery.endpoint.url, body, headers)
    return WebhookAttempt.objects.create(
        delivery=delivery,
        number=delivery.attempts,
        sent_at=sent_at,
        status_code=status_code,
        response_ms=round(1000 * (time.monotonic() - started)),
        error=error[:300],
    )


def signed_headers(*, secret: str, message_id: str, sent_at, body: str) -> dict[str, str]:
    """The Standard Webhooks headers: the message id, the attempt's time and the v1 signature."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, sent_at, body),
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # A redirect is an answer other than 2xx, as the specification has it: not followed.
    def redirect_request(self, *args, **kwargs):
        return None


# Public addresses only, checked as each attempt connects (annotation.public_addresses), no proxy.
_opener = public_opener(_NoRedirects)


def _post(url: str, body: str, headers: dict[str, str]) -> tuple[int | None, str]:
    """(status code, error): the status of any answer, or None and why nothing answered. A refused
    address is recorded as refused, with nothing of what it would have answered."""
    if urlsplit(url).scheme not in SCHEMES:  # urllib would also open file:// and ftp://
        return None, f"refused: {urlsplit(url).scheme}:// is not http:// or https://"
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    try:
        with _opener.open(request, timeout=settings.WEBHOOK_TIMEOUT_SECONDS) as response:
            return response.status, ""
    except urllib.error.HTTPError as error:
        return error.code, ""
    except (urllib.error.URLError, OSError) as error:  # refused, reset, timed out, unreachable
        reason = getattr(error, "reason", error)
        if isinstance(reason, AddressRefused):
            return None, f"refused: {reason}"
        return None, f"no answer: {reason}"
    except http.client.HTTPException as error:  # an answer that is not HTTP (a bad status line, cut short)
        return None, f"no readable answer: {type(error).__name__}: {error}"


def _allocation_spent(study: Study, clips) -> bool:
    """Model allocation reaches its target when it has spent the fixed design's budget (target x
    clips), or when no clip may take another listener."""
    done = clips.aggregate(done=Sum("completed_count"))["done"] or 0
    if done >= study.target_annotations * clips.count():
        return True
    return not clips.filter(completed_count__lt=study.adaptive_max_per_clip).exists()


def study_target_announce(*, study_id: int) -> bool:
    """Send study.target_reached once, when no clip of the study still waits for annotations.
    Called when a task completes; whether it was sent now."""
    study = Study.objects.only(
        "target_annotations", "slug", "name", "target_reached_at", "adaptive_mode", "adaptive_max_per_clip"
    ).get(pk=study_id)
    if study.target_reached_at is not None:
        return False
    clips = StudyItem.objects.filter(study_id=study_id, review__in=[StudyItem.Review.ACTIVE, StudyItem.Review.CLEARED])
    if study.adaptive_mode == Study.Adaptive.ALLOCATE:
        if not _allocation_spent(study, clips):
            return False
    else:
        waiting = clips.filter(completed_count__lt=study.target_annotations)
        if study.is_adaptive:  # a clip an adaptive design stopped early waits for nothing
            waiting = waiting.filter(settled=False)
        if waiting.exists():
            return False
    now = timezone.now()
    if not Study.objects.filter(pk=study_id, target_reached_at=None).update(target_reached_at=now):
        return False
    webhook_event_emit(
        event_type=WebhookEvent.STUDY_TARGET_REACHED,
        data={
            "study": study_id,
            "slug": study.slug,
            "name": study.name,
            "target_annotations": study.target_annotations,
        },
    )
    return True
