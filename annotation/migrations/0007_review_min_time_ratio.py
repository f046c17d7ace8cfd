"""The "too quick" review flag compares time per clip with the clip's duration, not an absolute
number of seconds: the old field's values (seconds) mean nothing as a ratio, so it is replaced and
every study starts from the default ratio."""

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_prolific_send_job"),
    ]

    operations = [
        migrations.RemoveField(model_name="study", name="review_min_seconds_per_clip"),
        migrations.AddField(
            model_name="study",
            name="review_min_time_ratio",
            field=models.FloatField(
                default=1.0,
                help_text="Flag a median time per clip below this multiple of the clip's duration "
                "(1.0: less time than it takes to play the clip once).",
                validators=[django.core.validators.MinValueValidator(0.0)],
            ),
        ),
    ]
