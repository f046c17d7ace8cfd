"""The Prolific integration's twelve models move to the prolific app (prolific/migrations/0001_prolific_app
takes them over). Nothing is copied: each table is renamed from annotation_<model> to prolific_<model>
(PostgreSQL keeps the rows, the identity sequences, the indexes and the foreign keys pointing at them;
SQLite rewrites the references), and the models leave annotation's migration state."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0021_headphone_check"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.AlterModelTable(name="BonusBatch", table="prolific_bonusbatch"),
                migrations.AlterModelTable(name="BonusLine", table="prolific_bonusline"),
                migrations.AlterModelTable(name="BonusPayJob", table="prolific_bonuspayjob"),
                migrations.AlterModelTable(name="ProlificCall", table="prolific_prolificcall"),
                migrations.AlterModelTable(name="ProlificParticipantGroup", table="prolific_prolificparticipantgroup"),
                migrations.AlterModelTable(name="ProlificSendJob", table="prolific_prolificsendjob"),
                migrations.AlterModelTable(name="ProlificStudy", table="prolific_prolificstudy"),
                migrations.AlterModelTable(name="ProlificStudyJob", table="prolific_prolificstudyjob"),
                migrations.AlterModelTable(name="ProlificSubmission", table="prolific_prolificsubmission"),
                migrations.AlterModelTable(name="ProlificWebhookReceipt", table="prolific_prolificwebhookreceipt"),
                migrations.AlterModelTable(name="ProlificWebhookSecret", table="prolific_prolificwebhooksecret"),
                migrations.AlterModelTable(
                    name="ProlificWebhookSubscription", table="prolific_prolificwebhooksubscription"
                ),
            ],
            state_operations=[
                migrations.RemoveField(
                    model_name="bonusbatch",
                    name="created_by",
                ),
                migrations.RemoveField(
                    model_name="bonusbatch",
                    name="study",
                ),
                migrations.RemoveField(
                    model_name="bonuspayjob",
                    name="batch",
                ),
                migrations.RemoveField(
                    model_name="bonusline",
                    name="batch",
                ),
                migrations.RemoveField(
                    model_name="bonusline",
                    name="participant",
                ),
                migrations.RemoveField(
                    model_name="bonuspayjob",
                    name="created_by",
                ),
                migrations.RemoveField(
                    model_name="prolificcall",
                    name="study",
                ),
                migrations.RemoveField(
                    model_name="prolificparticipantgroup",
                    name="source_study",
                ),
                migrations.RemoveField(
                    model_name="prolificstudyjob",
                    name="group",
                ),
                migrations.RemoveField(
                    model_name="prolificstudy",
                    name="exclude_group",
                ),
                migrations.RemoveField(
                    model_name="prolificsendjob",
                    name="created_by",
                ),
                migrations.RemoveField(
                    model_name="prolificsendjob",
                    name="study",
                ),
                migrations.RemoveField(
                    model_name="prolificstudy",
                    name="study",
                ),
                migrations.RemoveField(
                    model_name="prolificstudyjob",
                    name="prolific_study",
                ),
                migrations.RemoveField(
                    model_name="prolificstudyjob",
                    name="created_by",
                ),
                migrations.RemoveField(
                    model_name="prolificsubmission",
                    name="participant",
                ),
                migrations.DeleteModel(
                    name="ProlificWebhookReceipt",
                ),
                migrations.DeleteModel(
                    name="ProlificWebhookSecret",
                ),
                migrations.DeleteModel(
                    name="ProlificWebhookSubscription",
                ),
                migrations.DeleteModel(
                    name="BonusBatch",
                ),
                migrations.DeleteModel(
                    name="BonusLine",
                ),
                migrations.DeleteModel(
                    name="BonusPayJob",
                ),
                migrations.DeleteModel(
                    name="ProlificCall",
                ),
                migrations.DeleteModel(
                    name="ProlificParticipantGroup",
                ),
                migrations.DeleteModel(
                    name="ProlificSendJob",
                ),
                migrations.DeleteModel(
                    name="ProlificStudy",
                ),
                migrations.DeleteModel(
                    name="ProlificStudyJob",
                ),
                migrations.DeleteModel(
                    name="ProlificSubmission",
                ),
            ],
        ),
    ]
