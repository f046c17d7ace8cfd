"""The vocabulary renames of issue 19 as migrations: a database made before them (today's main)
keeps every row, value and permission grant under the new names. Runs on SQLite and, in the
PostgreSQL pass, on PostgreSQL (it has no marker, so both passes run it).

renames.py: keep old names (this file builds the database as it was, under the old names).
"""

import pytest
from django.apps import apps as global_apps
from django.contrib.contenttypes.management import inject_rename_contenttypes_operations
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import RenameModel

RENAMES = {("FormItem", "ListeningFormItem"), ("StudyReport", "AgreementReport")}


def _renaming_migrations() -> tuple[list, list]:
    """The migrations that rename the models (found by what they do, so renumbering them at a merge
    changes nothing here), and the migration of the same app before each."""
    loader = MigrationLoader(connection)
    after = sorted(
        key
        for key, migration in loader.disk_migrations.items()
        if any(isinstance(op, RenameModel) and (op.old_name, op.new_name) in RENAMES for op in migration.operations)
    )
    before = [
        next(parent for parent in loader.graph.node_map[key].parents if parent.key[0] == key[0]).key for key in after
    ]
    assert [app for app, _ in after] == ["annotation", "evaluation"], after
    return before, after


def _migrate(targets=None):
    """Migrate to `targets` (by default every app's latest) as `manage.py migrate` does, with the
    content-type renames it adds to each RenameModel (its pre_migrate handler)."""
    executor = MigrationExecutor(connection)
    targets = targets or executor.loader.graph.leaf_nodes()
    plan = executor.migration_plan(targets)
    inject_rename_contenttypes_operations(plan=plan, apps=global_apps, using=connection.alias)
    return executor.migrate(targets, plan=plan).apps


def _old_rows(apps) -> dict:
    """One row of each renamed model and field, as today's main writes them."""
    corpus = apps.get_model("annotation", "Corpus").objects.create(name="c")
    clip = apps.get_model("annotation", "Clip").objects.create(
        corpus=corpus,
        external_id="c1",
        transcript="a b",
        source_path="a.wav",
        duration=1.0,
        sample_rate=16000,
        checksum="0" * 64,
    )
    study = apps.get_model("annotation", "Study").objects.create(
        name="s", slug="s", kind="form", corpus=corpus, listening_check=True, listening_check_tries=3
    )
    participant = apps.get_model("annotation", "Participant").objects.create(
        study=study, access_key="k", listening_check_attempts=2, listening_check_passed=False
    )
    form_item = apps.get_model("annotation", "FormItem").objects.create(
        study=study, external_id="q1", item_type="rating", clip=clip, gold=3
    )
    apps.get_model("annotation", "StudyItem").objects.create(study=study, clip=clip, form_item=form_item)
    report = apps.get_model("evaluation", "StudyReport").objects.create(
        study=study,
        parameters={"seed": 1},
        parameters_key="p" * 64,
        fingerprint="f",
        result_json='{"a": 1}',
        status="succeeded",
    )
    label_set = apps.get_model("evaluation", "LabelSet").objects.create(
        name="ls", version=1, parameters={}, state="final", status="succeeded", checksum="c" * 64
    )
    Permission = apps.get_model("auth", "Permission")
    group = apps.get_model("auth", "Group").objects.create(name="researchers")
    group.permissions.set(
        Permission.objects.filter(codename__in=["view_studyreport", "add_studyreport", "change_formitem"])
    )
    assert group.permissions.count() == 3  # the old codenames exist before the migration
    return {
        "study": study.pk,
        "participant": participant.pk,
        "item": form_item.pk,
        "report": report.pk,
        "label_set": label_set.pk,
    }


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_renames_keeps_its_rows_under_the_new_names():
    before, after = _renaming_migrations()
    try:
        keys = _old_rows(_migrate(before))
        apps = _migrate(after)
        study = apps.get_model("annotation", "Study").objects.get(pk=keys["study"])
        assert (study.kind, study.sound_check, study.sound_check_tries) == ("form", True, 3)
        participant = apps.get_model("annotation", "Participant").objects.get(pk=keys["participant"])
        assert (participant.sound_check_attempts, participant.sound_check_passed) == (2, False)
        item = apps.get_model("annotation", "ListeningFormItem").objects.get(pk=keys["item"])
        assert (item.external_id, item.gold, item.study_item.study_id) == ("q1", 3, keys["study"])
        report = apps.get_model("evaluation", "AgreementReport").objects.get(pk=keys["report"])
        assert (report.study_id, report.result_json, report.status) == (keys["study"], '{"a": 1}', "succeeded")
        label_set = apps.get_model("evaluation", "LabelSet").objects.get(pk=keys["label_set"])
        assert (label_set.lifecycle, label_set.status) == ("final", "succeeded")
        granted = apps.get_model("auth", "Group").objects.get(name="researchers").permissions
        assert sorted(granted.values_list("content_type__model", "codename")) == [
            ("agreementreport", "add_agreementreport"),
            ("agreementreport", "view_agreementreport"),
            ("listeningformitem", "change_listeningformitem"),
        ]
        Permission = apps.get_model("auth", "Permission")
        assert not Permission.objects.filter(codename__regex=r"_(studyreport|formitem)$").exists()
        assert Permission.objects.get(codename="view_agreementreport").name == "Can view agreement report"
    finally:
        _migrate()  # leave the schema as the other tests expect it, even after a failure
