"""The Prolific integration as its own app (issue 30).

The twelve models annotation kept until annotation/migrations/0022_prolific_app, whose tables that
migration renamed to prolific_<model>, enter prolific's state here without touching the database,
and their content types follow them, so that every permission granted on them (and the admin's
history of them) stays where it was: a group allowed annotation.pay_bonusbatch is allowed
prolific.pay_bonusbatch.

Then what issue 30 changed: money in cents as Prolific answers it, one bonus per participant and
reason, payments marked paid only once Prolific shows them, Prolific's spelling of SCREENED OUT, and
webhooks acted on by a job. The amounts a batch stored before: `amount` and each line's `amount` were
ours, in the study's currency (1.50): they become cents (150). `fees`, `vat` and `total_amount` were
Prolific's answer, which is in cents, read as if it were currency: the number is kept, now labelled
cents. Lines that already paid a participant twice for one reason (what this release refuses) are
kept, each later one marked as repeating the one before it. Every step goes back as well.
"""

from contextlib import contextmanager
from decimal import Decimal

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import annotation.models.study

MOVED = [
    "bonusbatch",
    "bonusline",
    "bonuspayjob",
    "prolificcall",
    "prolificparticipantgroup",
    "prolificsendjob",
    "prolificstudy",
    "prolificstudyjob",
    "prolificsubmission",
    "prolificwebhookreceipt",
    "prolificwebhooksecret",
    "prolificwebhooksubscription",
]


def content_types_follow(apps, schema_editor):
    """The moved models' content types (and so their permissions) change app, keeping their ids. On
    a new database there are none yet: they are made after migrating, under prolific."""
    _relabel(apps, schema_editor, source="annotation", target="prolific")


def content_types_go_back(apps, schema_editor):
    _relabel(apps, schema_editor, source="prolific", target="annotation")


def _relabel(apps, schema_editor, *, source: str, target: str) -> None:
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
    content_types.filter(app_label=source, model__in=MOVED).update(app_label=target)


@contextmanager
def checked_at_once(schema_editor):
    """Foreign keys checked at each statement, not at the commit: PostgreSQL refuses to alter a table
    (or index it) while checks of rows updated in the same transaction are pending, and the data
    steps here are followed by schema steps on the same tables."""
    postgresql = schema_editor.connection.vendor == "postgresql"
    if postgresql:
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    try:
        yield
    finally:
        if postgresql:
            schema_editor.execute("SET CONSTRAINTS ALL DEFERRED")


def amounts_to_cents(apps, schema_editor):
    db = schema_editor.connection.alias
    with checked_at_once(schema_editor):
        for model_name in ("BonusBatch", "BonusLine"):
            model = apps.get_model("prolific", model_name)
            for row in model.objects.using(db).only("pk", "amount"):
                cents = int((row.amount * 100).to_integral_value())
                model.objects.using(db).filter(pk=row.pk).update(amount_cents=cents)


def amounts_to_currency(apps, schema_editor):
    db = schema_editor.connection.alias
    with checked_at_once(schema_editor):
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
    with checked_at_once(schema_editor):
        for line in BonusLine.objects.using(db).select_related("batch").order_by("pk"):
            key = " ".join(line.batch.reason.lower().split())[:200]
            earlier = latest.get((line.participant_id, key))
            BonusLine.objects.using(db).filter(pk=line.pk).update(reason_key=key, repeats_id=earlier)
            latest[(line.participant_id, key)] = line.pk


def screened_out_spelt_as_prolific_does(apps, schema_editor):
    ProlificSubmission = apps.get_model("prolific", "ProlificSubmission")
    db = schema_editor.connection.alias
    with checked_at_once(schema_editor):
        ProlificSubmission.objects.using(db).filter(status="SCREENED-OUT").update(status="SCREENED OUT")


def screened_out_spelt_as_before(apps, schema_editor):
    ProlificSubmission = apps.get_model("prolific", "ProlificSubmission")
    db = schema_editor.connection.alias
    with checked_at_once(schema_editor):
        ProlificSubmission.objects.using(db).filter(status="SCREENED OUT").update(status="SCREENED-OUT")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("annotation", "0022_prolific_app"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="ProlificWebhookReceipt",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("event_id", models.CharField(blank=True, max_length=64, null=True, unique=True)),
                        ("signature", models.CharField(max_length=100, unique=True)),
                        ("signed_at", models.DateTimeField()),
                        ("event_type", models.CharField(max_length=60)),
                        ("resource_id", models.CharField(blank=True, max_length=64)),
                        ("status", models.CharField(blank=True, max_length=40)),
                        ("payload", models.JSONField(default=dict)),
                        ("outcome", models.CharField(blank=True, max_length=200)),
                        ("received_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "ordering": ["-received_at"],
                    },
                ),
                migrations.CreateModel(
                    name="ProlificWebhookSecret",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("workspace_id", models.CharField(max_length=64)),
                        ("secret", models.CharField(max_length=200)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "ordering": ["-created_at", "-pk"],
                    },
                ),
                migrations.CreateModel(
                    name="ProlificWebhookSubscription",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("workspace_id", models.CharField(max_length=64)),
                        ("event_type", models.CharField(max_length=60)),
                        ("target_url", models.URLField(max_length=500)),
                        ("subscription_id", models.CharField(max_length=64, unique=True)),
                        ("confirmed", models.BooleanField(default=False)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "ordering": ["event_type"],
                    },
                ),
                migrations.CreateModel(
                    name="BonusBatch",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "reason",
                            models.CharField(
                                help_text="Why these participants get a bonus, for the record.", max_length=200
                            ),
                        ),
                        ("prolific_study_id", models.CharField(max_length=64)),
                        (
                            "prolific_bulk_id",
                            models.CharField(help_text="Prolific's bulk bonus payment id.", max_length=64, unique=True),
                        ),
                        (
                            "stage",
                            models.CharField(
                                choices=[
                                    ("created", "Created at Prolific, not paid"),
                                    ("paying", "Pay call sent, not yet confirmed"),
                                    ("paid", "Paid"),
                                ],
                                default="created",
                                max_length=10,
                            ),
                        ),
                        (
                            "amount",
                            models.DecimalField(
                                decimal_places=2, help_text="Bonuses, in the study's currency.", max_digits=10
                            ),
                        ),
                        (
                            "fees",
                            models.DecimalField(
                                decimal_places=2, default=0, help_text="Prolific's fees, as it said.", max_digits=10
                            ),
                        ),
                        ("vat", models.DecimalField(decimal_places=2, default=0, max_digits=10)),
                        (
                            "total_amount",
                            models.DecimalField(
                                decimal_places=2, help_text="What Prolific will charge.", max_digits=10
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "pay_sent_at",
                            models.DateTimeField(blank=True, help_text="When the one pay call went out.", null=True),
                        ),
                        ("paid_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "paid_how",
                            models.CharField(
                                blank=True, help_text="Prolific's answer, or what reconciling found.", max_length=200
                            ),
                        ),
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
                            "study",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="bonus_batches",
                                to="annotation.study",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name_plural": "bonus batches",
                        "ordering": ["-created_at", "-pk"],
                        "permissions": [("pay_bonusbatch", "Can pay a bonus batch through Prolific")],
                    },
                ),
                migrations.CreateModel(
                    name="ProlificCall",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("method", models.CharField(max_length=8)),
                        ("path", models.CharField(help_text="Below PROLIFIC_API_URL.", max_length=300)),
                        ("request_body", models.JSONField(blank=True, null=True)),
                        (
                            "attempt",
                            models.PositiveSmallIntegerField(
                                default=1, help_text="2 and up: a retry (429, or 5xx on a safe call)."
                            ),
                        ),
                        (
                            "status",
                            models.PositiveSmallIntegerField(
                                help_text="Prolific's HTTP status; 0 when no answer came."
                            ),
                        ),
                        ("response_body", models.JSONField(blank=True, null=True)),
                        ("error", models.CharField(blank=True, help_text="Why no answer came.", max_length=500)),
                        ("duration_ms", models.PositiveIntegerField(default=0)),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        (
                            "study",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="prolific_calls",
                                to="annotation.study",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["-created_at", "-pk"],
                    },
                ),
                migrations.CreateModel(
                    name="ProlificParticipantGroup",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("prolific_id", models.CharField(max_length=64, unique=True)),
                        ("name", models.CharField(max_length=200)),
                        (
                            "participant_count",
                            models.PositiveIntegerField(default=0, help_text="As Prolific last reported it."),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "source_study",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="prolific_groups_fed",
                                to="annotation.study",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["name", "pk"],
                    },
                ),
                migrations.CreateModel(
                    name="ProlificStudy",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "prolific_id",
                            models.CharField(
                                blank=True, db_index=True, help_text="Prolific's study id.", max_length=64
                            ),
                        ),
                        (
                            "status",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("", "Not created on Prolific yet"),
                                    ("UNPUBLISHED", "Unpublished (draft)"),
                                    ("PUBLISHING", "Publishing"),
                                    ("SCHEDULED", "Scheduled"),
                                    ("ACTIVE", "Active"),
                                    ("PAUSED", "Paused"),
                                    ("AWAITING REVIEW", "Awaiting review"),
                                    ("COMPLETED", "Completed"),
                                ],
                                default="",
                                max_length=16,
                            ),
                        ),
                        ("name", models.CharField(help_text="The title participants see on Prolific.", max_length=200)),
                        ("description", models.TextField(help_text="What participants read before they take part.")),
                        (
                            "estimated_minutes",
                            models.PositiveSmallIntegerField(
                                help_text="Proposed from the clips; accept it or change it.",
                                validators=[django.core.validators.MinValueValidator(1)],
                            ),
                        ),
                        (
                            "hourly_rate_cents",
                            models.PositiveIntegerField(
                                default=1500,
                                help_text="Pay per hour in cents (1500: 15.00).",
                                validators=[django.core.validators.MinValueValidator(1)],
                            ),
                        ),
                        (
                            "reward_cents",
                            models.PositiveIntegerField(
                                help_text="Pay per place in cents: the hourly rate × estimated time."
                            ),
                        ),
                        (
                            "places",
                            models.PositiveIntegerField(
                                help_text="Prolific's places (to start).",
                                validators=[django.core.validators.MinValueValidator(1)],
                            ),
                        ),
                        (
                            "places_ceiling",
                            models.PositiveIntegerField(
                                blank=True,
                                help_text="Most places the top-ups may grow the study to; empty: no growth.",
                                null=True,
                            ),
                        ),
                        (
                            "auto_grow",
                            models.BooleanField(
                                default=False,
                                help_text="While the study is active, add the places the clips still need (a periodic job).",
                            ),
                        ),
                        ("device_compatibility", models.JSONField(default=list, help_text='e.g. ["desktop"]')),
                        ("peripheral_requirements", models.JSONField(default=list, help_text='e.g. ["audio"]')),
                        (
                            "language",
                            models.CharField(
                                help_text="First and fluent language, as Prolific names it.", max_length=60
                            ),
                        ),
                        (
                            "approval_rate_min",
                            models.PositiveSmallIntegerField(
                                default=99, validators=[django.core.validators.MaxValueValidator(100)]
                            ),
                        ),
                        (
                            "approval_rate_max",
                            models.PositiveSmallIntegerField(
                                default=100, validators=[django.core.validators.MaxValueValidator(100)]
                            ),
                        ),
                        (
                            "approvals_min",
                            models.PositiveIntegerField(
                                default=25, help_text="Fewest approved studies a participant has."
                            ),
                        ),
                        (
                            "education",
                            models.JSONField(
                                blank=True, default=list, help_text="Education levels accepted, as Prolific names them."
                            ),
                        ),
                        ("no_hearing_difficulties", models.BooleanField(default=True)),
                        ("no_literacy_difficulties", models.BooleanField(default=True)),
                        (
                            "attention_failed_code",
                            models.CharField(default=annotation.models.study.new_code, max_length=32),
                        ),
                        (
                            "screen_out_reward_cents",
                            models.PositiveIntegerField(
                                default=10, help_text="Fixed pay for a participant our screening sends away, in cents."
                            ),
                        ),
                        (
                            "screen_out_slots",
                            models.PositiveIntegerField(
                                default=50,
                                help_text="Most participants Prolific lets us screen out.",
                                validators=[django.core.validators.MinValueValidator(1)],
                            ),
                        ),
                        (
                            "bonus_budget_cents",
                            models.PositiveIntegerField(default=0, help_text="Bonuses planned, for the cost preview."),
                        ),
                        (
                            "body_sent",
                            models.JSONField(
                                blank=True, editable=False, help_text="The draft as we created it.", null=True
                            ),
                        ),
                        ("total_available_places", models.PositiveIntegerField(blank=True, editable=False, null=True)),
                        ("synced_at", models.DateTimeField(blank=True, editable=False, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "exclude_group",
                            models.ForeignKey(
                                blank=True,
                                help_text="Participants in this group cannot take the study.",
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="excluded_from",
                                to="prolific.prolificparticipantgroup",
                            ),
                        ),
                        (
                            "study",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="prolific",
                                to="annotation.study",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "Prolific study",
                        "verbose_name_plural": "Prolific studies",
                    },
                ),
                migrations.CreateModel(
                    name="ProlificStudyJob",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
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
                            models.TextField(
                                blank=True, help_text="Why the job failed, for the person who started it."
                            ),
                        ),
                        (
                            "attempts",
                            models.PositiveSmallIntegerField(
                                default=0, help_text="How many times a worker started it."
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "heartbeat_at",
                            models.DateTimeField(blank=True, help_text="Last sign of life from its worker.", null=True),
                        ),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "action",
                            models.CharField(
                                choices=[
                                    ("create", "Create the draft on Prolific"),
                                    ("publish", "Publish"),
                                    ("pause", "Pause"),
                                    ("resume", "Resume"),
                                    ("stop", "Stop"),
                                    ("grow", "Grow places"),
                                    ("sync", "Refresh from Prolific"),
                                    ("group", "Add to a participant group"),
                                ],
                                max_length=10,
                            ),
                        ),
                        (
                            "site_url",
                            models.URLField(blank=True, help_text="Our address, for the study link sent to Prolific."),
                        ),
                        ("group_name", models.CharField(blank=True, max_length=200)),
                        ("members", models.CharField(blank=True, help_text="annotators or rejected", max_length=12)),
                        ("outcome", models.TextField(blank=True, help_text="What Prolific did, in a sentence.")),
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
                            "group",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to="prolific.prolificparticipantgroup",
                            ),
                        ),
                        (
                            "prolific_study",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="jobs",
                                to="prolific.prolificstudy",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["-created_at", "-pk"],
                    },
                ),
                migrations.CreateModel(
                    name="ProlificSubmission",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "submission_id",
                            models.CharField(
                                help_text="Prolific's id: the link's SESSION_ID.", max_length=64, unique=True
                            ),
                        ),
                        ("prolific_study_id", models.CharField(blank=True, db_index=True, max_length=64)),
                        ("prolific_pid", models.CharField(blank=True, max_length=64)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("RESERVED", "Reserved"),
                                    ("ACTIVE", "Active"),
                                    ("AWAITING REVIEW", "Awaiting Review"),
                                    ("APPROVED", "Approved"),
                                    ("PARTIALLY APPROVED", "Partially Approved"),
                                    ("REJECTED", "Rejected"),
                                    ("RETURNED", "Returned"),
                                    ("TIMED-OUT", "Timed Out"),
                                    ("SCREENED-OUT", "Screened Out"),
                                    ("UNKNOWN", "Unknown"),
                                ],
                                max_length=24,
                            ),
                        ),
                        (
                            "status_at",
                            models.DateTimeField(
                                help_text="When Prolific said so (the webhook's timestamp, or the poll's time)."
                            ),
                        ),
                        ("source", models.CharField(choices=[("poll", "poll"), ("webhook", "webhook")], max_length=10)),
                        (
                            "released_task",
                            models.PositiveIntegerField(
                                blank=True,
                                help_text="The task whose reserved clips this status gave back to the pool.",
                                null=True,
                            ),
                        ),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "participant",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="prolific_submissions",
                                to="annotation.participant",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["-status_at"],
                    },
                ),
                migrations.CreateModel(
                    name="BonusLine",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("prolific_pid", models.CharField(max_length=64)),
                        ("amount", models.DecimalField(decimal_places=2, max_digits=8)),
                        (
                            "batch",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="lines",
                                to="prolific.bonusbatch",
                            ),
                        ),
                        (
                            "participant",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="bonus_lines",
                                to="annotation.participant",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["batch", "pk"],
                        "constraints": [
                            models.UniqueConstraint(fields=("batch", "participant"), name="bonus_line_once_per_batch")
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="BonusPayJob",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
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
                            models.TextField(
                                blank=True, help_text="Why the job failed, for the person who started it."
                            ),
                        ),
                        (
                            "attempts",
                            models.PositiveSmallIntegerField(
                                default=0, help_text="How many times a worker started it."
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "heartbeat_at",
                            models.DateTimeField(blank=True, help_text="Last sign of life from its worker.", null=True),
                        ),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "batch",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="pay_jobs",
                                to="prolific.bonusbatch",
                            ),
                        ),
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
                    ],
                    options={
                        "ordering": ["-created_at", "-pk"],
                        "constraints": [
                            models.UniqueConstraint(
                                condition=models.Q(("status__in", ["queued", "running"])),
                                fields=("batch",),
                                name="one_unfinished_bonus_pay",
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="ProlificSendJob",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
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
                            models.TextField(
                                blank=True, help_text="Why the job failed, for the person who started it."
                            ),
                        ),
                        (
                            "attempts",
                            models.PositiveSmallIntegerField(
                                default=0, help_text="How many times a worker started it."
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "heartbeat_at",
                            models.DateTimeField(blank=True, help_text="Last sign of life from its worker.", null=True),
                        ),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "sent",
                            models.JSONField(
                                blank=True, default=list, help_text="Participants whose decision Prolific accepted."
                            ),
                        ),
                        (
                            "failed",
                            models.JSONField(
                                blank=True,
                                default=list,
                                help_text="[participant, Prolific's answer] of those not sent.",
                            ),
                        ),
                        (
                            "skipped",
                            models.JSONField(
                                blank=True, default=list, help_text="[participant, why] of those not sent from here."
                            ),
                        ),
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
                            "study",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="prolific_send_jobs",
                                to="annotation.study",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["-created_at", "-pk"],
                        "constraints": [
                            models.UniqueConstraint(
                                condition=models.Q(("status__in", ["queued", "running"])),
                                fields=("study",),
                                name="one_unfinished_prolific_send",
                            )
                        ],
                    },
                ),
                migrations.AddConstraint(
                    model_name="prolificstudy",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("approval_rate_min__lte", models.F("approval_rate_max"))),
                        name="prolific_approval_range",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="prolificstudy",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("places_ceiling__isnull", True),
                            ("places_ceiling__gte", models.F("places")),
                            _connector="OR",
                        ),
                        name="prolific_ceiling_at_least_places",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="prolificstudyjob",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("status__in", ["queued", "running"])),
                        fields=("prolific_study",),
                        name="one_unfinished_prolific_study_job",
                    ),
                ),
            ],
        ),
        migrations.RunPython(content_types_follow, content_types_go_back),
        # --- issue 30 ---
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
