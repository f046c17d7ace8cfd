from django.db import migrations, models

RULE_HELP = (
    "How a word's mark is compared with the level it must take. Words that must stay unmarked "
    "(0) pass only unmarked under either rule."
)
RULE_CHOICES = [
    ("at_least", "At least the level named (a heavy mark passes where emphasized is asked)"),
    ("exact", "Exactly the level named"),
]


class Migration(migrations.Migration):
    """Checks made before the rule existed keep the exact match they were answered under; new ones
    ask for at least the level."""

    dependencies = [
        ("annotation", "0022_prolific_app"),
    ]

    operations = [
        migrations.AddField(
            model_name="attentioncheck",
            name="rule",
            field=models.CharField(choices=RULE_CHOICES, default="exact", help_text=RULE_HELP, max_length=8),
        ),
        migrations.AlterField(
            model_name="attentioncheck",
            name="rule",
            field=models.CharField(choices=RULE_CHOICES, default="at_least", help_text=RULE_HELP, max_length=8),
        ),
    ]
