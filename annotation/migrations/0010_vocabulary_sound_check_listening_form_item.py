"""One vocabulary (issue 19): the sound check (was "listening check") and the listening form's
items (FormItem -> ListeningFormItem). Renames only: every row and column keeps its data; the
permissions keep their grants under the new model name."""

from django.db import migrations

# (old model name, new model name, new verbose name): Django names a model's permissions
# "<action>_<model name>", so a renamed model would get new, ungranted ones; these keep the grants.
PERMISSION_RENAMES = [("formitem", "listeningformitem", "listening form item")]
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
    _rename_permissions(apps, PERMISSION_RENAMES, "annotation")


def backwards(apps, schema_editor):
    _rename_permissions(apps, [(new, old, "form item") for old, new, _ in PERMISSION_RENAMES], "annotation")


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0009_seconds_spent_from_hand_out"),
        # evaluation.SystemOutput points at the form item: its table must exist under the old name first.
        ("evaluation", "0006_suite_reports"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RenameModel(old_name="FormItem", new_name="ListeningFormItem"),
        migrations.RenameField(model_name="study", old_name="listening_check", new_name="sound_check"),
        migrations.RenameField(model_name="study", old_name="listening_check_tries", new_name="sound_check_tries"),
        migrations.RenameField(
            model_name="participant", old_name="listening_check_attempts", new_name="sound_check_attempts"
        ),
        migrations.RenameField(
            model_name="participant", old_name="listening_check_passed", new_name="sound_check_passed"
        ),
        migrations.RunPython(forwards, backwards),
    ]
