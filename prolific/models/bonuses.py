"""Bonus batches paid through Prolific exactly once (issue 22).

A batch is set up at Prolific when it is created (`submissions/bonus-payments/`: Prolific answers
with its id and the total with fees), shown with that total, and paid by a BonusPayJob
(`bulk-bonus-payments/{id}/pay/`). That call is not idempotent: sent twice, it pays twice. So the
batch's stage moves CREATED -> PAYING by a conditional update committed *before* the call, which only
one worker can win; a batch found PAYING is never sent again, only reconciled against what Prolific
shows of the study's bonuses (prolific.services.bonuses).
"""

from datetime import timedelta

from django.conf import settings
from django.db import models

from annotation.models.background_job import BackgroundJob
from annotation.models.participation import Participant
from annotation.models.study import Study

UNFINISHED = [BackgroundJob.Status.QUEUED, BackgroundJob.Status.RUNNING]


class BonusBatch(models.Model):
    class Stage(models.TextChoices):
        CREATED = "created", "Created at Prolific, not paid"
        PAYING = "paying", "Pay call sent, not yet confirmed"
        PAID = "paid", "Paid"

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="bonus_batches")
    reason = models.CharField(max_length=200, help_text="Why these participants get a bonus, for the record.")
    prolific_study_id = models.CharField(max_length=64)
    prolific_bulk_id = models.CharField(max_length=64, unique=True, help_text="Prolific's bulk bonus payment id.")
    stage = models.CharField(max_length=10, choices=Stage.choices, default=Stage.CREATED)
    amount = models.DecimalField(max_digits=10, decimal_places=2, help_text="Bonuses, in the study's currency.")
    fees = models.DecimalField(max_digits=10, decimal_places=2, default=0, help_text="Prolific's fees, as it said.")
    vat = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    total_amount = models.DecimalField(max_digits=10, decimal_places=2, help_text="What Prolific will charge.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    pay_sent_at = models.DateTimeField(null=True, blank=True, help_text="When the one pay call went out.")
    paid_at = models.DateTimeField(null=True, blank=True)
    paid_how = models.CharField(max_length=200, blank=True, help_text="Prolific's answer, or what reconciling found.")

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "bonus batches"
        permissions = [("pay_bonusbatch", "Can pay a bonus batch through Prolific")]

    def __str__(self) -> str:
        return f"bonus batch #{self.pk} of {self.study} ({self.get_stage_display()})"


class BonusLine(models.Model):
    batch = models.ForeignKey(BonusBatch, on_delete=models.CASCADE, related_name="lines")
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="bonus_lines")
    prolific_pid = models.CharField(max_length=64)
    amount = models.DecimalField(max_digits=8, decimal_places=2)

    class Meta:
        ordering = ["batch", "pk"]
        constraints = [models.UniqueConstraint(fields=["batch", "participant"], name="bonus_line_once_per_batch")]

    def __str__(self) -> str:
        return f"{self.amount} to {self.participant}"


class BonusPayJob(BackgroundJob):
    """Paying one batch: sends the pay call once, or reconciles a batch whose call was sent."""

    TASK_NAME = "prolific.bonus_batch_pay_run"
    # The pay call waits at most the client's timeout; a worker silent this long is gone.
    STALE_AFTER = timedelta(minutes=5)
    MAX_ATTEMPTS = 5

    batch = models.ForeignKey(BonusBatch, on_delete=models.CASCADE, related_name="pay_jobs")

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            # A double click queues one job: the second insert meets this and is refused.
            models.UniqueConstraint(
                fields=["batch"], condition=models.Q(status__in=UNFINISHED), name="one_unfinished_bonus_pay"
            )
        ]

    def __str__(self) -> str:
        return f"paying bonus batch #{self.batch_id}"
