"""Dataset exports: a finalized label set (or a study's raw annotations) as a zip for researchers."""

from django.db import models

from annotation.models import Study
from annotation.models.background_job import BackgroundJob
from evaluation.models.label_sets import LabelSet


class DatasetExport(BackgroundJob):
    """One export, built by a worker into a zip kept in the storage backend (local or S3) and
    downloaded through a short-lived link."""

    TASK_NAME = "evaluation.dataset_export_run"

    class Format(models.TextChoices):
        JSONL = "jsonl", "JSONL (rows per word and per clip)"
        CSV = "csv", "CSV (rows per word and per clip)"
        AUDIOFOLDER = "audiofolder", "Hugging Face audiofolder"
        TEXTGRID = "textgrid", "Praat TextGrids"
        RAW = "raw", "Raw annotations of a study"

    format = models.CharField(max_length=12, choices=Format.choices)
    label_set = models.ForeignKey(LabelSet, on_delete=models.PROTECT, null=True, blank=True, related_name="exports")
    study = models.ForeignKey(
        Study, on_delete=models.CASCADE, null=True, blank=True, related_name="exports", help_text="Raw exports."
    )
    include_prolific_ids = models.BooleanField(default=False, help_text="Raw exports: Prolific ids, not opaque ids.")
    file = models.FileField(max_length=300, blank=True)
    file_name = models.CharField(max_length=200, blank=True, help_text="The name the download is saved under.")
    size = models.PositiveBigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(format="raw", study__isnull=False, label_set__isnull=True)
                | (~models.Q(format="raw") & models.Q(label_set__isnull=False, study__isnull=True)),
                name="export_of_a_label_set_or_raw_of_a_study",
            )
        ]

    def __str__(self) -> str:
        source = self.label_set or self.study
        return f"{self.get_format_display()} of {source}"
