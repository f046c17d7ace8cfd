"""Participants, their tasks, what they played, and what they submitted."""

import secrets

from django.db import models

from annotation.models.corpus import Clip
from annotation.models.study import AttentionCheck, Study, StudyItem


def new_access_key() -> str:
    return secrets.token_urlsafe(24)


class Participant(models.Model):
    class Decision(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"
        RETURN_REQUESTED = "return_requested", "Asked to return"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    prolific_pid = models.CharField(max_length=64, blank=True, db_index=True)
    prolific_study_id = models.CharField(max_length=64, blank=True)
    prolific_session_id = models.CharField(max_length=64, blank=True)
    access_key = models.CharField(max_length=64, unique=True, default=new_access_key)
    created_at = models.DateTimeField(auto_now_add=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    screening_answers = models.JSONField(default=dict, blank=True)
    screened_at = models.DateTimeField(null=True, blank=True)
    screened_out = models.BooleanField(default=False)
    sound_check_attempts = models.PositiveSmallIntegerField(default=0)
    sound_check_passed = models.BooleanField(null=True, blank=True)
    headphone_level_set_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When they set their volume by the reference noise, before the headphone check.",
    )
    headphone_check_passed = models.BooleanField(
        null=True, blank=True, help_text="Empty until the headphone check is decided (its trials: HeadphoneTrial)."
    )
    completed_at = models.DateTimeField(null=True, blank=True)
    decision = models.CharField(max_length=20, choices=Decision.choices, default=Decision.PENDING)
    decision_note = models.TextField(blank=True)
    decision_sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "prolific_pid"],
                condition=~models.Q(prolific_pid=""),
                name="participant_unique_prolific_pid",
            )
        ]

    def __str__(self) -> str:
        # No Prolific id: admin titles, breadcrumbs and filters show this to anyone who may view
        # participants; pages for who may see Prolific ids use participant_display_name.
        return f"participant #{self.pk}"


class Task(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        COMPLETED = "completed"
        EXPIRED = "expired"

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="tasks")
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="tasks")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["study", "status", "expires_at"])]

    def __str__(self) -> str:
        return f"task {self.pk} of {self.participant}"


class TaskItem(models.Model):
    """One clip in a task, in the order the participant must take them."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SUBMITTED = "submitted"
        RELEASED = "released", "Released (task expired)"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField()
    clip = models.ForeignKey(Clip, on_delete=models.PROTECT, related_name="+")
    study_item = models.ForeignKey(StudyItem, on_delete=models.PROTECT, null=True, blank=True)
    attention_check = models.ForeignKey(AttentionCheck, on_delete=models.PROTECT, null=True, blank=True)
    word_count = models.PositiveSmallIntegerField()
    duration = models.FloatField(help_text="Seconds of every clip the item plays, summed.")
    presentation = models.JSONField(
        default=dict, blank=True, help_text="How this participant was shown the item: option, clip and pole order."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)

    class Meta:
        ordering = ["task", "position"]
        constraints = [models.UniqueConstraint(fields=["task", "position"], name="task_item_unique_position")]

    def __str__(self) -> str:
        return f"{self.task} #{self.position + 1}"


class PlaybackEvent(models.Model):
    """What the page reported about playback; receipt time is the server's clock."""

    class Kind(models.TextChoices):
        PLAY = "play"
        PAUSE = "pause"
        SEEKING = "seeking"
        SEEKED = "seeked"
        TIMEUPDATE = "timeupdate"
        ENDED = "ended"
        RATECHANGE = "ratechange"

    item = models.ForeignKey(TaskItem, on_delete=models.CASCADE, related_name="playback_events")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    track = models.PositiveSmallIntegerField(default=0, help_text="Which clip of the item: 0, or 1 for clip B.")
    media_time = models.FloatField()
    rate = models.FloatField(default=1.0)
    client_ms = models.FloatField(help_text="The page's clock (performance.now), for spacing only.")
    page = models.PositiveIntegerField(default=0, help_text="The page load that reported it (random per load).")
    received_at = models.DateTimeField()

    class Meta:
        ordering = ["item", "received_at", "client_ms", "pk"]


class Annotation(models.Model):
    """A submitted answer: one level per word. Final once written."""

    item = models.OneToOneField(TaskItem, on_delete=models.CASCADE, related_name="annotation")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="annotations")
    clip = models.ForeignKey(Clip, on_delete=models.PROTECT, related_name="annotations")
    levels = models.JSONField(default=list, blank=True, help_text="0, 1 or 2 for each word, in word order.")
    response = models.JSONField(
        default=dict, blank=True, help_text="A form answer, in the item's own terms (not the order shown)."
    )
    mismatch_reported = models.BooleanField(default=False)
    attention_passed = models.BooleanField(null=True, blank=True, help_text="Only for attention checks.")
    coverage = models.FloatField(help_text="Share of the clip actually played.")
    seconds_spent = models.FloatField(
        help_text="From the clip's hand-out (the previous submission, or the task's start) to its submission, "
        "by the server's clock."
    )
    submitted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["submitted_at"]
        indexes = [models.Index(fields=["clip", "participant"])]
