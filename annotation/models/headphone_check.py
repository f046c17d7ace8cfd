"""The headphone check's answers: one row per trial answered, kept whether the participant passed
or was screened out (annotation/services/headphone_check.py writes them)."""

from django.db import models

from annotation.models.participation import Participant


class HeadphoneTrial(models.Model):
    class Test(models.TextChoices):
        HUGGINS = "huggins", "Huggins pitch"
        ANTIPHASE = "antiphase", "Antiphase tones"

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="headphone_trials")
    test = models.CharField(max_length=10, choices=Test.choices)
    attempt = models.PositiveSmallIntegerField(help_text="The try, from 0.")
    trial = models.PositiveSmallIntegerField(help_text="The trial within the try, from 0.")
    target = models.PositiveSmallIntegerField(help_text="The interval to find: 0, 1 or 2.")
    answer = models.PositiveSmallIntegerField(help_text="The interval the participant chose: 0, 1 or 2.")
    correct = models.BooleanField()
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["participant", "test", "attempt", "trial"]
        constraints = [
            # An answer sent twice (a double click, a resend) is one answer.
            models.UniqueConstraint(
                fields=["participant", "test", "attempt", "trial"], name="headphone_trial_unique_answer"
            )
        ]

    def __str__(self) -> str:
        return f"{self.participant}: {self.test} try {self.attempt + 1}, trial {self.trial + 1}"
