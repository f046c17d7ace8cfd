"""The one shape of a background job: queued -> running -> succeeded | failed, with progress.

Every kind of job (corpus imports, agreement reports, listening-form reports, Prolific decisions)
is a concrete model on `BackgroundJob`, queued and run by `annotation.shared.jobs`; a job kind adds only
its own inputs and outputs and the name of the Celery task that runs it.
"""

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


class BackgroundJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    # The Celery task that runs this kind (it calls annotation.shared.jobs.job_run); its queue comes
    # from the Celery routes in settings.
    TASK_NAME: str = ""
    # A running job whose worker wrote nothing (no progress, no heartbeat) for this long is
    # taken as lost with its worker: it is queued again, or failed after MAX_ATTEMPTS starts.
    STALE_AFTER = timedelta(minutes=30)
    MAX_ATTEMPTS = 3
    # The webhook event sent when a job of this kind ends so ({status: event type}; see
    # annotation.models.webhooks.WebhookEvent), with webhook_data() as its data.
    WEBHOOK_EVENTS: dict[str, str] = {}

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(max_length=100, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, help_text="Why the job failed, for the person who started it.")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker started it.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life from its worker.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED)

    def webhook_data(self) -> dict:
        """What a webhook says of this job: which it is and how it ended (kinds add their subject)."""
        return {"id": self.pk, "status": self.status, "error": self.error}

    def is_silent(self, now=None) -> bool:
        """Unfinished, and nothing heard of it for longer than STALE_AFTER: running without a
        heartbeat (its worker is gone), or queued without a worker taking it (its message may be lost)."""
        if self.finished:
            return False
        last_sign = self.heartbeat_at or self.created_at
        return (now or timezone.now()) - last_sign > self.STALE_AFTER
