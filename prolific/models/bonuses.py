"""Bonus batches paid through Prolific exactly once (issues 22 and 30).

A batch is set up at Prolific when it is created (`submissions/bonus-payments/`: Prolific answers
with its id and the total with fees, in cents), shown with that total, and paid by a BonusPayJob
(`bulk-bonus-payments/{id}/pay/`). That call is not idempotent: sent twice, it pays twice. So the
batch's stage moves CREATED -> PAYING by a conditional update committed *before* the call, which only
one worker can win. Prolific accepts the call (202) and pays in the following minutes: the batch is
PAID only once Prolific's record of the study's submissions shows its bonuses (reconciling,
prolific.services.bonuses). A batch found PAYING is never sent again, unless a recovery finds that
Prolific shows none of it.

Money is in cents throughout, as Prolific answers it: our own amounts (the lines and their sum) are
whole cents; Prolific's fees, VAT and total are kept as it answered them, which may hold a fraction
of a cent (its documentation's example: fees 283.34 on 850).

A participant is paid once per reason in a study (BonusLine.reason_key, unique per participant
unless the line says which earlier bonus it deliberately repeats): a second batch for the same
people and the same reason is refused, and two set up at once cannot both be stored.
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
    amount_cents = models.PositiveIntegerField(help_text="The bonuses, in cents of the study's currency.")
    fees_cents = models.DecimalField(
        max_digits=12, decimal_places=2, default=0, help_text="Prolific's fees, in cents, as it answered."
    )
    vat_cents = models.DecimalField(
        max_digits=12, decimal_places=2, default=0, help_text="In cents, as Prolific answered."
    )
    total_cents = models.DecimalField(
        max_digits=12, decimal_places=2, help_text="What Prolific takes from the balance, in cents, as it answered."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    pay_sent_at = models.DateTimeField(null=True, blank=True, help_text="When the one pay call went out.")
    pay_accepted_at = models.DateTimeField(
        null=True, blank=True, help_text="When Prolific accepted the pay call (202): it pays in the following minutes."
    )
    paid_at = models.DateTimeField(null=True, blank=True, help_text="When Prolific's record first showed every bonus.")
    paid_how = models.CharField(max_length=300, blank=True, help_text="What reconciling with Prolific found.")
    overpaid_cents = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=0,
        help_text="Cents of bonus Prolific shows on these participants beyond what the study's batches paid "
        "(a payment made twice, or by hand): flagged for the researcher.",
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "bonus batches"
        permissions = [("pay_bonusbatch", "Can pay a bonus batch through Prolific")]

    def __str__(self) -> str:
        return f"bonus batch #{self.pk} of {self.study} ({self.get_stage_display()})"


def reason_key(reason: str) -> str:
    """A bonus's reason as compared: case and spacing do not make another reason."""
    return " ".join(reason.lower().split())[:200]


class BonusLine(models.Model):
    batch = models.ForeignKey(BonusBatch, on_delete=models.CASCADE, related_name="lines")
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="bonus_lines")
    prolific_pid = models.CharField(max_length=64)
    amount_cents = models.PositiveIntegerField(help_text="In cents of the study's currency.")
    reason_key = models.CharField(max_length=200, help_text="The batch's reason as compared (reason_key).")
    repeats = models.OneToOneField(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="repeated_by",
        help_text="The earlier bonus of the same reason this one pays again, deliberately.",
    )

    class Meta:
        ordering = ["batch", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "participant"], name="bonus_line_once_per_batch"),
            # Two batches set up at once for the same people and reason: the second insert fails here.
            models.UniqueConstraint(
                fields=["participant", "reason_key"],
                condition=models.Q(repeats__isnull=True),
                name="bonus_once_per_participant_and_reason",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.amount_cents} cents to {self.participant}"


class BonusPayJob(BackgroundJob):
    """Paying one batch: sends the pay call once, or reconciles a batch whose call was sent."""

    TASK_NAME = "prolific.bonus_batch_pay_run"
    # The pay call waits at most the client's timeout; a worker silent this long is gone.
    STALE_AFTER = timedelta(minutes=5)
    MAX_ATTEMPTS = 5

    batch = models.ForeignKey(BonusBatch, on_delete=models.CASCADE, related_name="pay_jobs")
    resend_if_unpaid = models.BooleanField(
        default=False,
        help_text="A recovery: for a batch whose pay call went out, send it again if Prolific's record shows none "
        "of the batch.",
    )

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
