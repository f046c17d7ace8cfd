"""What Prolific says of a study's submissions, and the webhooks it sent us (issues 22 and 30).

A submission is Prolific's record of one participant's place: its id is the SESSION_ID of the study
link (Participant.prolific_session_id). Its status reaches us by polling or by a webhook; a
RETURNED, TIMED-OUT or REJECTED one releases its open task's reserved clips at once
(prolific.services.submissions).

A webhook is stored as it arrives (ProlificWebhookReceipt) and acted on by a background job
(ProlificWebhookJob), so that its request is answered at once, whatever Prolific's API or our
database is doing.
"""

from datetime import timedelta

from django.db import models

from annotation.models.background_job import BackgroundJob
from annotation.models.participation import Participant


class ProlificSubmissionStatus(models.TextChoices):
    # Prolific's own names, spelt as it spells them (docs.prolific.com/api-reference/submissions/
    # submission-object and .../studies/count-study-submissions-by-status; prolific-oss/cli
    # model/submission_counts.go): SCREENED OUT with a space, TIMED-OUT with a hyphen.
    RESERVED = "RESERVED"
    ACTIVE = "ACTIVE"
    AWAITING_REVIEW = "AWAITING REVIEW"
    APPROVED = "APPROVED"
    PARTIALLY_APPROVED = "PARTIALLY APPROVED"
    REJECTED = "REJECTED"
    RETURNED = "RETURNED"
    TIMED_OUT = "TIMED-OUT"
    SCREENED_OUT = "SCREENED OUT"


# A participant holding one of these no longer works on their task: its clips go back to the pool.
RELEASING_STATUSES = frozenset(
    {ProlificSubmissionStatus.RETURNED, ProlificSubmissionStatus.TIMED_OUT, ProlificSubmissionStatus.REJECTED}
)


class ProlificSubmission(models.Model):
    submission_id = models.CharField(max_length=64, unique=True, help_text="Prolific's id: the link's SESSION_ID.")
    prolific_study_id = models.CharField(max_length=64, blank=True, db_index=True)
    prolific_pid = models.CharField(max_length=64, blank=True)
    participant = models.ForeignKey(
        Participant, on_delete=models.SET_NULL, null=True, blank=True, related_name="prolific_submissions"
    )
    status = models.CharField(max_length=24, choices=ProlificSubmissionStatus.choices)
    status_at = models.DateTimeField(help_text="When Prolific said so (the webhook's timestamp, or the poll's time).")
    source = models.CharField(max_length=10, choices=[("poll", "poll"), ("webhook", "webhook")])
    released_task = models.PositiveIntegerField(
        null=True, blank=True, help_text="The task whose reserved clips this status gave back to the pool."
    )
    updated_at = models.DateTimeField(auto_now=True)
    # Not a field: set on the instance prolific_submission_record returns, whether that statement
    # released a task (declared for the type checker).
    released_now: bool

    class Meta:
        ordering = ["-status_at"]

    def __str__(self) -> str:
        return f"submission {self.submission_id} ({self.status})"


class ProlificWebhookReceipt(models.Model):
    """Every webhook that passed its signature check, once: the key of a redelivery (the same
    X-Event-ID) and of a replay (the same signature) is unique here; a repeat is acknowledged and
    stored no more. Its `outcome` is written by its job."""

    event_id = models.CharField(max_length=64, null=True, blank=True, unique=True)
    signature = models.CharField(max_length=100, unique=True)
    signed_at = models.DateTimeField(help_text="X-Prolific-Request-Timestamp: when this delivery was signed.")
    sent_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="X-Timestamp: when Prolific sent the event, which orders it among the others (the signing time "
        "when it has none).",
    )
    event_type = models.CharField(max_length=60)
    resource_id = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=40, blank=True)
    payload = models.JSONField(default=dict)
    outcome = models.CharField(max_length=200, blank=True, help_text="What its job did.")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.event_type} {self.resource_id} ({self.status})"

    @property
    def ordered_at(self):
        """The time the event is ordered by: X-Timestamp, or the signing time without one."""
        return self.sent_at or self.signed_at


class ProlificWebhookJob(BackgroundJob):
    """Acting on one webhook taken (prolific.services.webhooks.prolific_webhook_process_run): a
    submission's status recorded (its clips released), or a study read again from Prolific."""

    TASK_NAME = "prolific.prolific_webhook_process_run"
    # Reading a study from Prolific waits at most the client's timeout and its retries.
    STALE_AFTER = timedelta(minutes=5)
    MAX_ATTEMPTS = 5

    receipt = models.OneToOneField(ProlificWebhookReceipt, on_delete=models.CASCADE, related_name="job")

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"acting on {self.receipt}"


class ProlificWebhookSecret(models.Model):
    """The workspace's signing secret Prolific gave us when the admin subscribed the webhooks
    (Prolific keeps one active secret per workspace; the newest here is the one used)."""

    workspace_id = models.CharField(max_length=64)
    secret = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"webhook secret of workspace {self.workspace_id}"


class ProlificWebhookSubscription(models.Model):
    workspace_id = models.CharField(max_length=64)
    event_type = models.CharField(max_length=60)
    target_url = models.URLField(max_length=500)
    subscription_id = models.CharField(max_length=64, unique=True)
    confirmed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["event_type"]

    def __str__(self) -> str:
        return f"{self.event_type} -> {self.target_url}"
