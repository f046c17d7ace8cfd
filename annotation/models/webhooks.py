"""Webhooks out: researchers subscribe a URL to the platform's events.

Each event becomes one delivery per subscribed endpoint, a background job signed per the
Standard Webhooks specification (https://www.standardwebhooks.com/): the same message id on
every attempt, so a receiver can drop a repeat; each attempt is recorded with its answer.
"""

import base64
import secrets
from datetime import timedelta

from django.db import models

from annotation.models.background_job import BackgroundJob


class WebhookEvent(models.TextChoices):
    IMPORT_FINISHED = "import.finished", "A corpus import finished"
    IMPORT_FAILED = "import.failed", "A corpus import failed"
    STUDY_TARGET_REACHED = "study.target_reached", "A study reached its target"
    REPORT_READY = "agreement_report.ready", "An agreement report is ready"
    LABEL_SET_FINALIZED = "label_set.finalized", "A label set was finalized"
    EXPORT_READY = "dataset_export.ready", "A dataset export is ready"
    BENCHMARK_RUN_FINISHED = "benchmark_run.finished", "A benchmark run finished"
    BENCHMARK_RUN_FAILED = "benchmark_run.failed", "A benchmark run failed"


def new_secret() -> str:
    """A signing secret in the specification's form: whsec_ and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


class WebhookEndpoint(models.Model):
    url = models.URLField(max_length=500, help_text="Where the events are POSTed.")
    description = models.CharField(max_length=200, blank=True)
    events = models.JSONField(default=list, help_text="The event types sent to this URL.")
    secret = models.CharField(
        max_length=80, default=new_secret, editable=False, help_text="Verify the signatures with this secret."
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["url"]

    def __str__(self) -> str:
        return self.description or self.url


class WebhookDelivery(BackgroundJob):
    """One event for one endpoint; attempted until it is answered with a 2xx or out of attempts."""

    TASK_NAME = "annotation.webhook_delivery_run"
    # An attempt waits at most the send timeout; a worker silent for this long is gone.
    STALE_AFTER = timedelta(minutes=5)
    # Attempts (the first and the retries); the waits between them are WEBHOOK_RETRY_SECONDS.
    MAX_ATTEMPTS = 8

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event_type = models.CharField(max_length=40, choices=WebhookEvent.choices)
    message_id = models.CharField(
        max_length=40, unique=True, help_text="The webhook-id header, the same on every attempt."
    )
    payload = models.JSONField(help_text="The JSON body sent: type, timestamp and data.")
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"{self.event_type} to {self.endpoint}"


class WebhookAttempt(models.Model):
    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_rows")
    number = models.PositiveSmallIntegerField()
    sent_at = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Empty when nothing answered.")
    response_ms = models.PositiveIntegerField(help_text="Time until the answer, or until the attempt gave up.")
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_unique_number")]

    def __str__(self) -> str:
        return f"attempt {self.number}: {self.status_code or self.error}"

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300
