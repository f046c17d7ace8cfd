"""One vocabulary (issue 19): the agreement report (was StudyReport) and a label set's lifecycle
(draft, final, archived; was `state`, beside its build job's `status`). Renames only: every row
keeps its data; the permissions keep their grants under the new model name."""

from django.db import migrations

PERMISSION_RENAMES = [("studyreport", "agreementreport", "agreement report")]
ACTIONS = ("add", "change", "delete", "view")


def _rename_permissions(apps, renames, app_label: str) -> None:
    Permission = apps.get_model("auth", "Permission")
    for old, new, verbose in renames:
        for action in ACTIONS:
            found = Permission.objects.filter(content_type__app_label=app_label, codename=f"{action}_{old}")
            for permission in found:
                if Permission.objects.filter(content_type=permission.content_type, codename=f"{action}_{new}").exists():
                    continue  # made already (by a migrate that ran the new code): keep that one
                permission.codename, permission.name = f"{action}_{new}", f"Can {action} {verbose}"
                permission.save(update_fields=["codename", "name"])


def forwards(apps, schema_editor):
    _rename_permissions(apps, PERMISSION_RENAMES, "evaluation")


def backwards(apps, schema_editor):
    _rename_permissions(apps, [(new, old, "study report") for old, new, _ in PERMISSION_RENAMES], "evaluation")


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0006_suite_reports"),
        ("annotation", "0010_vocabulary_sound_check_listening_form_item"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RenameModel(old_name="StudyReport", new_name="AgreementReport"),
        # The index's generated name follows the table's.
        migrations.RenameIndex(
            model_name="agreementreport",
            new_name="evaluation__study_i_d4cb5c_idx",
            old_name="evaluation__study_i_b5f2fb_idx",
        ),
        migrations.RenameField(model_name="labelset", old_name="state", new_name="lifecycle"),
        migrations.RunPython(forwards, backwards),
    ]
