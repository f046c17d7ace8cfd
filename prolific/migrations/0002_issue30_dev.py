"""Issue 30: money in cents as Prolific answers it, one bonus per participant and reason, payments
marked paid only once Prolific shows them, Prolific's spelling of SCREENED OUT, and webhooks acted on
by a job.

The amounts a batch stored before: `amount` and each line's `amount` were ours, in the study's
currency (1.50): they become cents (150). `fees`, `vat` and `total_amount` were Prolific's answer,
which is in cents, read as if it were currency: the number is kept, now labelled cents. Lines that
already paid a participant twice for one reason (what this release refuses) are kept, each later one
marked as repeating the one before it.
"""

from decimal import Decimal

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def amounts_to_cents(apps, schema_editor):
    db = schema_editor.connection.alias
    for model_name in ("BonusBatch", "BonusLine"):
        model = apps.get_model("prolific", model_name)
        for row in model.objects.using(db).only("pk", "amount"):
            model.objects.using(db).filter(pk=row.pk).update(amount_cents=int((row.amount * 100).to_integral_value()))


def amounts_to_currency(apps, schema_editor):
    db = schema_editor.connection.alias
    for model_name in ("BonusBatch", "BonusLine"):
        model = apps.get_model("prolific", model_name)
        for row in model.objects.using(db).only("pk", "amount_cents"):
            model.objects.using(db).filter(pk=row.pk).update(amount=Decimal(row.amount_cents) / 100)


def reasons_of_lines(apps, schema_editor):
    """Each line takes its batch's reason as compared, and a second bonus of one reason to one
    participant is marked as repeating the one before (the unique constraint comes next)."""
    BonusLine = apps.get_model("prolific", "BonusLine")
    db = schema_editor.connection.alias
    latest: dict[tuple[int, str], int] = {}
    for line in BonusLine.objects.using(db).select_related("batch").order_by("pk"):
        key = " ".join(line.batch.reason.lower().split())[:200]
        earlier = latest.get((line.participant_id, key))
        BonusLine.objects.using(db).filter(pk=line.pk).update(reason_key=key, repeats_id=earlier)
        latest[(line.participant_id, key)] = line.pk


def screened_out_spelt_as_prolific_does(apps, schema_editor):
    ProlificSubmission = apps.get_model("prolific", "ProlificSubmission")
    db = schema_editor.connection.alias
    ProlificSubmission.objects.using(db).filter(status="SCREENED-OUT").update(status="SCREENED OUT")


def screened_out_spelt_as_before(apps, schema_editor):
    ProlificSubmission = apps.get_model("prolific", "ProlificSubmission")
    db = schema_editor.connection.alias
    ProlificSubmission.objects.using(db).filter(status="SCREENED OUT").update(status="SCREENED-OUT")


class Migration(migrations.Migration):
    dependencies = [
        ("prolific", "0001_prolific_app"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # --- our amounts, currency -> cents ---
        migrations.AddField(
            model_name="bonusbatch",
            name="amount_cents",
            field=models.PositiveIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="bonusline",
            name="amount_cents",
            field=models.PositiveIntegerField(null=True),
        ),
        # Nullable while it goes, so that going back can refill it before it is required again.
        migrations.AlterField(
            model_name="bonusbatch",
            name="amount",
            field=models.DecimalField(decimal_places=2, max_digits=10, null=True),
        ),
        migrations.AlterField(
            model_name="bonusline",
            name="amount",
            field=models.DecimalField(decimal_places=2, max_digits=8, null=True),
        ),
        migrations.RunPython(amounts_to_cents, amounts_to_currency),
        migrations.RemoveField(model_name="bonusbatch", name="amount"),
        migrations.RemoveField(model_name="bonusline", name="amount"),
        migrations.AlterField(
            model_name="bonusbatch",
            name="amount_cents",
            field=models.PositiveIntegerField(help_text="The bonuses, in cents of the study's currency."),
        ),
        migrations.AlterField(
            model_name="bonusline",
            name="amount_cents",
            field=models.PositiveIntegerField(help_text="In cents of the study's currency."),
        ),
        # --- Prolific's amounts: already cents, now labelled so ---
        migrations.RenameField(model_name="bonusbatch", old_name="fees", new_name="fees_cents"),
        migrations.RenameField(model_name="bonusbatch", old_name="vat", new_name="vat_cents"),
        migrations.RenameField(model_name="bonusbatch", old_name="total_amount", new_name="total_cents"),
        migrations.AlterField(
            model_name="bonusbatch",
            name="fees_cents",
            field=models.DecimalField(
                decimal_places=2, default=0, help_text="Prolific's fees, in cents, as it answered.", max_digits=12
            ),
        ),
        migrations.AlterField(
            model_name="bonusbatch",
            name="vat_cents",
            field=models.DecimalField(
                decimal_places=2, default=0, help_text="In cents, as Prolific answered.", max_digits=12
            ),
        ),
        migrations.AlterField(
            model_name="bonusbatch",
            name="total_cents",
            field=models.DecimalField(
                decimal_places=2,
                help_text="What Prolific takes from the balance, in cents, as it answered.",
                max_digits=12,
            ),
        ),
        # --- paid only once Prolific's record shows it ---
        migrations.AddField(
            model_name="bonusbatch",
            name="pay_accepted_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When Prolific accepted the pay call (202): it pays in the following minutes.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="bonusbatch",
            name="overpaid_cents",
            field=models.DecimalField(
                decimal_places=2,
                default=0,
                help_text="Cents of bonus Prolific shows on these participants beyond what the study's batches paid "
                "(a payment made twice, or by hand): flagged for the researcher.",
                max_digits=12,
            ),
        ),
        migrations.AlterField(
            model_name="bonusbatch",
            name="paid_at",
            field=models.DateTimeField(
                blank=True, help_text="When Prolific's record first showed every bonus.", null=True
            ),
        ),
        migrations.AlterField(
            model_name="bonusbatch",
            name="paid_how",
            field=models.CharField(blank=True, help_text="What reconciling with Prolific found.", max_length=300),
        ),
        migrations.AddField(
            model_name="bonuspayjob",
            name="resend_if_unpaid",
            field=models.BooleanField(
                default=False,
                help_text="A recovery: for a batch whose pay call went out, send it again if Prolific's record shows "
                "none of the batch.",
            ),
        ),
        # --- one bonus per participant and reason ---
        migrations.AddField(
            model_name="bonusline",
            name="reason_key",
            field=models.CharField(
                default="", help_text="The batch's reason as compared (reason_key).", max_length=200
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="bonusline",
            name="repeats",
            field=models.OneToOneField(
                blank=True,
                help_text="The earlier bonus of the same reason this one pays again, deliberately.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="repeated_by",
                to="prolific.bonusline",
            ),
        ),
        migrations.RunPython(reasons_of_lines, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="bonusline",
            constraint=models.UniqueConstraint(
                condition=models.Q(("repeats__isnull", True)),
                fields=("participant", "reason_key"),
                name="bonus_once_per_participant_and_reason",
            ),
        ),
        # --- Prolific's spelling ---
        migrations.AlterField(
            model_name="prolificsubmission",
            name="status",
            field=models.CharField(
                choices=[
                    ("RESERVED", "Reserved"),
                    ("ACTIVE", "Active"),
                    ("AWAITING REVIEW", "Awaiting Review"),
                    ("APPROVED", "Approved"),
                    ("PARTIALLY APPROVED", "Partially Approved"),
                    ("REJECTED", "Rejected"),
                    ("RETURNED", "Returned"),
                    ("TIMED-OUT", "Timed Out"),
                    ("SCREENED OUT", "Screened Out"),
                ],
                max_length=24,
            ),
        ),
        migrations.RunPython(screened_out_spelt_as_prolific_does, screened_out_spelt_as_before),
        # --- webhooks acted on by a job, ordered by X-Timestamp ---
        migrations.AddField(
            model_name="prolificwebhookreceipt",
            name="sent_at",
            field=models.DateTimeField(
                blank=True,
                help_text="X-Timestamp: when Prolific sent the event, which orders it among the others (the signing "
                "time when it has none).",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="prolificwebhookreceipt",
            name="signed_at",
            field=models.DateTimeField(help_text="X-Prolific-Request-Timestamp: when this delivery was signed."),
        ),
        migrations.AlterField(
            model_name="prolificwebhookreceipt",
            name="outcome",
            field=models.CharField(blank=True, help_text="What its job did.", max_length=200),
        ),
        migrations.CreateModel(
            name="ProlificWebhookJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("queued", "Queued"),
                            ("running", "Running"),
                            ("succeeded", "Succeeded"),
                            ("failed", "Failed"),
                        ],
                        default="queued",
                        max_length=16,
                    ),
                ),
                ("phase", models.CharField(blank=True, max_length=100)),
                ("done", models.PositiveIntegerField(default=0)),
                ("total", models.PositiveIntegerField(default=0)),
                (
                    "error",
                    models.TextField(blank=True, help_text="Why the job failed, for the person who started it."),
                ),
                (
                    "attempts",
                    models.PositiveSmallIntegerField(default=0, help_text="How many times a worker started it."),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                (
                    "heartbeat_at",
                    models.DateTimeField(blank=True, help_text="Last sign of life from its worker.", null=True),
                ),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "receipt",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="job",
                        to="prolific.prolificwebhookreceipt",
                    ),
                ),
            ],
            options={"ordering": ["-created_at", "-pk"]},
        ),
    ]
