"""Researchers' decisions on participants, sent to Prolific by a background worker."""

from django.db import models

from annotation.models.background_job import BackgroundJob
from annotation.models.study import Study

UNFINISHED = [BackgroundJob.Status.QUEUED, BackgroundJob.Status.RUNNING]


class ProlificSendJob(BackgroundJob):
    """One sending of a study's unsent decisions (prolific.services.send).

    The outcome is what the review page shows: who was sent, who was not with Prolific's answer,
    who was skipped and why. A participant is marked sent (Participant.decision_sent_at) only once
    Prolific accepted the decision, so a send that failed or stopped can simply be started again.
    """

    TASK_NAME = "prolific.prolific_decisions_send_run"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="prolific_send_jobs")
    sent = models.JSONField(default=list, blank=True, help_text="Participants whose decision Prolific accepted.")
    failed = models.JSONField(default=list, blank=True, help_text="[participant, Prolific's answer] of those not sent.")
    skipped = models.JSONField(default=list, blank=True, help_text="[participant, why] of those not sent from here.")

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            # Two sends at once would both read the same unsent decisions and send them twice.
            models.UniqueConstraint(
                fields=["study"], condition=models.Q(status__in=UNFINISHED), name="one_unfinished_prolific_send"
            )
        ]

    def __str__(self) -> str:
        return f"Decisions of {self.study} sent to Prolific"

    @property
    def sent_count(self) -> int:
        return len(self.sent)

    @property
    def failed_count(self) -> int:
        return len(self.failed)
