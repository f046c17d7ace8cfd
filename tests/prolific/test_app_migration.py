"""The Prolific integration left annotation for its own app (annotation 0022 renames the twelve
tables, prolific 0001 takes the models over): a database made before the move, as today's main
makes it, keeps every row, every foreign key between the moved tables and to annotation's, its
sequences, and every permission granted on the moved models, now under `prolific.`. Runs on SQLite
and, in the PostgreSQL pass, on PostgreSQL (no marker: both passes run it).

renames.py: keep old names (this file builds the database as it was, with the models in annotation).
"""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import SeparateDatabaseAndState
from django.test.utils import CaptureQueriesContext

MOVED = {
    "BonusBatch",
    "BonusLine",
    "BonusPayJob",
    "ProlificCall",
    "ProlificParticipantGroup",
    "ProlificSendJob",
    "ProlificStudy",
    "ProlificStudyJob",
    "ProlificSubmission",
    "ProlificWebhookReceipt",
    "ProlificWebhookSecret",
    "ProlificWebhookSubscription",
}


def _moving_migrations() -> tuple[tuple[str, str], tuple[str, str], tuple[str, str]]:
    """annotation's migration before the move (today's main's latest), the move, and prolific's first,
    found by what they do so that renumbering at a merge changes nothing here."""
    loader = MigrationLoader(connection)
    [move] = [
        key
        for key, migration in loader.disk_migrations.items()
        if key[0] == "annotation"
        and any(isinstance(op, SeparateDatabaseAndState) for op in migration.operations)
        and "prolific" in " ".join(str(op) for op in migration.operations).lower()
    ]
    before = next(parent.key for parent in loader.graph.node_map[move].parents if parent.key[0] == "annotation")
    return before, move, ("prolific", "0001_prolific_app")


def _migrate(targets=None):
    executor = MigrationExecutor(connection)
    targets = targets or executor.loader.graph.leaf_nodes()
    return executor.migrate(targets).apps


def _old_rows(apps) -> dict:
    """One row of every moved model, written under annotation as today's main writes them."""
    old = lambda name: apps.get_model("annotation", name)  # noqa: E731
    user = apps.get_model("auth", "User").objects.create(username="researcher", is_staff=True)
    corpus = old("Corpus").objects.create(name="c")
    study = old("Study").objects.create(name="s", slug="s", corpus=corpus)
    participant = old("Participant").objects.create(
        study=study, access_key="k", prolific_pid="a" * 24, prolific_study_id="b" * 24, prolific_session_id="c" * 24
    )
    group = old("ProlificParticipantGroup").objects.create(prolific_id="g" * 24, name="annotators of s")
    prolific_study = old("ProlificStudy").objects.create(
        study=study,
        prolific_id="b" * 24,
        status="ACTIVE",
        name="Mark the stressed words",
        description="d",
        estimated_minutes=10,
        reward_cents=250,
        places=20,
        language="English",
        exclude_group=group,
    )
    old("ProlificStudyJob").objects.create(prolific_study=prolific_study, action="sync", group=group, created_by=user)
    old("ProlificCall").objects.create(study=study, method="GET", path="studies/", status=200, response_body={"a": 1})
    batch = old("BonusBatch").objects.create(
        study=study,
        reason="quality bonus",
        prolific_study_id="b" * 24,
        prolific_bulk_id="d" * 24,
        stage="paid",
        amount=Decimal("1.50"),  # ours, in the study's currency
        fees=Decimal("50.00"),  # Prolific's answer, in cents, read as currency on main
        total_amount=Decimal("200.00"),
        created_by=user,
    )
    line = old("BonusLine").objects.create(
        batch=batch, participant=participant, prolific_pid="a" * 24, amount=Decimal("1.50")
    )
    # The same bonus paid twice, as main allowed: kept, the second marked as repeating the first.
    twice = old("BonusBatch").objects.create(
        study=study,
        reason="Quality  bonus",
        prolific_study_id="b" * 24,
        prolific_bulk_id="e" * 24,
        stage="paid",
        amount=Decimal("1.50"),
        total_amount=Decimal("200.00"),
    )
    again = old("BonusLine").objects.create(
        batch=twice, participant=participant, prolific_pid="a" * 24, amount=Decimal("1.50")
    )
    pay_job = old("BonusPayJob").objects.create(batch=batch, status="succeeded", created_by=user)
    send_job = old("ProlificSendJob").objects.create(study=study, status="succeeded", sent=["a" * 24])
    submission = old("ProlificSubmission").objects.create(
        submission_id="c" * 24,
        participant=participant,
        status="APPROVED",
        status_at=datetime(2026, 1, 1, tzinfo=UTC),
        source="poll",
    )
    old("ProlificSubmission").objects.create(
        submission_id="f" * 24, status="SCREENED-OUT", status_at=datetime(2026, 1, 1, tzinfo=UTC), source="poll"
    )  # main's spelling
    old("ProlificWebhookReceipt").objects.create(
        event_id="e" * 24, signature="sig", signed_at=datetime(2026, 1, 1, tzinfo=UTC), event_type="x"
    )
    old("ProlificWebhookSecret").objects.create(workspace_id="w", secret="s3cret")
    old("ProlificWebhookSubscription").objects.create(
        workspace_id="w", event_type="x", target_url="https://example.org/h", subscription_id="h"
    )
    Permission = apps.get_model("auth", "Permission")
    granted = Permission.objects.filter(
        content_type__app_label="annotation", codename__in=["pay_bonusbatch", "view_bonusbatch", "change_prolificstudy"]
    )
    researchers = apps.get_model("auth", "Group").objects.create(name="researchers")
    researchers.permissions.set(granted)
    assert researchers.permissions.count() == 3  # main has these permissions, under annotation
    return {
        "user": user.pk,
        "study": study.pk,
        "participant": participant.pk,
        "batch": batch.pk,
        "line": line.pk,
        "again": again.pk,
        "pay_job": pay_job.pk,
        "send_job": send_job.pk,
        "submission": submission.pk,
        "prolific_study": prolific_study.pk,
        "content_types": dict(
            apps.get_model("contenttypes", "ContentType")
            .objects.filter(app_label="annotation", model__in=[name.lower() for name in MOVED])
            .values_list("model", "pk")
        ),
    }


def _tables() -> set[str]:
    return set(connection.introspection.table_names())


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_move_keeps_its_rows_and_grants_under_prolific():
    before, move, first = _moving_migrations()
    try:
        keys = _old_rows(_migrate([before, ("prolific", None)]))
        assert {f"annotation_{name.lower()}" for name in MOVED} <= _tables()
        assert len(keys["content_types"]) == len(MOVED)  # today's main has them, under annotation

        with CaptureQueriesContext(connection) as queries:
            _migrate([move])
        copied = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("INSERT", "DELETE", "CREATE"))]
        assert not [sql for sql in copied if "django_migrations" not in sql]  # the move renames, never copies
        apps = _migrate([first])
        tables = _tables()
        assert {f"prolific_{name.lower()}" for name in MOVED} <= tables
        assert not {f"annotation_{name.lower()}" for name in MOVED} & tables
        new = lambda name: apps.get_model("prolific", name)  # noqa: E731
        batch = new("BonusBatch").objects.get(pk=keys["batch"])
        assert (batch.study_id, batch.stage, batch.created_by_id) == (keys["study"], "paid", keys["user"])
        # Our amounts in cents; Prolific's numbers kept, now read as the cents they always were.
        assert (batch.amount_cents, batch.fees_cents, batch.total_cents) == (150, Decimal("50"), Decimal("200"))
        line = new("BonusLine").objects.get(pk=keys["line"])
        assert (line.batch_id, line.participant_id, line.amount_cents) == (batch.pk, keys["participant"], 150)
        again = new("BonusLine").objects.get(pk=keys["again"])
        assert (line.reason_key, line.repeats_id, again.reason_key, again.repeats_id) == (
            "quality bonus",
            None,
            "quality bonus",
            line.pk,
        )
        assert new("BonusPayJob").objects.get(pk=keys["pay_job"]).batch_id == batch.pk
        assert new("ProlificSubmission").objects.get(submission_id="f" * 24).status == "SCREENED OUT"  # Prolific's
        assert new("ProlificSendJob").objects.get(pk=keys["send_job"]).sent == ["a" * 24]
        assert new("ProlificSubmission").objects.get(pk=keys["submission"]).participant_id == keys["participant"]
        prolific_study = new("ProlificStudy").objects.get(pk=keys["prolific_study"])
        assert (prolific_study.study_id, prolific_study.exclude_group.name) == (keys["study"], "annotators of s")
        assert new("ProlificStudyJob").objects.get().prolific_study_id == prolific_study.pk
        assert new("ProlificCall").objects.get().response_body == {"a": 1}
        assert new("ProlificWebhookReceipt").objects.get().event_id == "e" * 24
        assert new("ProlificWebhookSecret").objects.get().secret == "s3cret"
        assert new("ProlificWebhookSubscription").objects.get().subscription_id == "h"
        # The sequences went with the tables: a new row takes the next id, no clash with the old ones.
        assert (
            new("BonusBatch")
            .objects.create(
                study_id=keys["study"],
                prolific_study_id="b" * 24,
                prolific_bulk_id="f" * 24,
                amount_cents=1,
                total_cents=1,
            )
            .pk
            > batch.pk
        )
        # The content types changed app keeping their ids, so the grants and the admin's history follow.
        ContentType = apps.get_model("contenttypes", "ContentType")
        moved = dict(
            ContentType.objects.filter(model__in=[name.lower() for name in MOVED]).values_list("model", "app_label")
        )
        assert set(moved.values()) == {"prolific"}
        moved_ids = ContentType.objects.filter(app_label="prolific", model__in=[name.lower() for name in MOVED])
        assert dict(moved_ids.values_list("model", "pk")) == keys["content_types"]
        granted = apps.get_model("auth", "Group").objects.get(name="researchers").permissions
        assert sorted(granted.values_list("content_type__app_label", "codename")) == [
            ("prolific", "change_prolificstudy"),
            ("prolific", "pay_bonusbatch"),
            ("prolific", "view_bonusbatch"),
        ]
    finally:
        _migrate()  # leave the schema as the other tests expect it, even after a failure


@pytest.mark.django_db(transaction=True)
def test_a_user_of_a_group_granted_before_the_move_may_still_pay_bonuses(client):
    """After the migrations, through Django's own permission check and the admin: the group's grant
    on the moved content type is `prolific.pay_bonusbatch`."""
    from django.contrib.auth.models import Group, Permission, User

    before, _, _ = _moving_migrations()
    try:
        old_apps = _migrate([before, ("prolific", None)])
        OldPermission = old_apps.get_model("auth", "Permission")
        group = old_apps.get_model("auth", "Group").objects.create(name="payers")
        group.permissions.set(
            OldPermission.objects.filter(
                content_type__app_label="annotation", codename__in=["view_bonusbatch", "pay_bonusbatch"]
            )
        )
        _migrate()
        user = User.objects.create_user("payer", is_staff=True)
        user.groups.add(Group.objects.get(name="payers"))
        assert user.has_perms(["prolific.view_bonusbatch", "prolific.pay_bonusbatch"])
        assert not Permission.objects.filter(content_type__app_label="annotation", codename__endswith="bonusbatch")
        client.force_login(user)
        assert client.get("/admin/prolific/bonusbatch/").status_code == 200
        assert client.get("/api/v1/bonus-batches/").status_code == 200
    finally:
        _migrate()


@pytest.mark.django_db(transaction=True)
def test_the_move_goes_back_to_the_database_main_had():
    """Migrating back (a release rolled back) returns every value as main stored it: amounts in the
    study's currency again, main's spelling, the content types under annotation."""
    before, _, _ = _moving_migrations()
    try:
        keys = _old_rows(_migrate([before, ("prolific", None)]))
        _migrate()
        apps = _migrate([before, ("prolific", None)])
        old = lambda name: apps.get_model("annotation", name)  # noqa: E731
        batch = old("BonusBatch").objects.get(pk=keys["batch"])
        assert (batch.amount, batch.fees, batch.total_amount) == (Decimal("1.50"), Decimal("50"), Decimal("200"))
        assert old("BonusLine").objects.get(pk=keys["line"]).amount == Decimal("1.50")
        assert old("ProlificSubmission").objects.get(submission_id="f" * 24).status == "SCREENED-OUT"
        ContentType = apps.get_model("contenttypes", "ContentType")
        assert (
            dict(ContentType.objects.filter(model__in=[name.lower() for name in MOVED]).values_list("model", "pk"))
            == keys["content_types"]
        )
        assert set(
            ContentType.objects.filter(model__in=[name.lower() for name in MOVED]).values_list("app_label", flat=True)
        ) == {"annotation"}
    finally:
        _migrate()
