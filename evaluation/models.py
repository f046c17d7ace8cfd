"""Agreement reports computed in the background and kept until new annotations arrive."""

from django.conf import settings
from django.db import models

from annotation.models import Study
from annotation.models.progress import JobProgress


class StudyReport(JobProgress, models.Model):
    """One computation of a study's agreement report, for one scope and set of parameters.

    `fingerprint` describes the annotations it was computed from (evaluation.selectors.agreement_reports); a report
    whose fingerprint no longer matches the study's is stale and is computed again on request.
    `result_json` holds the canonical JSON text itself, so a download is byte for byte what was
    computed (a JSON column would reorder keys and reformat numbers).
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="agreement_reports")
    language = models.CharField(max_length=35, blank=True, help_text="Empty for the whole study.")
    parameters = models.JSONField(help_text="Subsample, seed, resamples, exclusions and thresholds.")
    parameters_key = models.CharField(max_length=64, help_text="SHA-256 of the canonical parameters.")
    fingerprint = models.CharField(max_length=200, help_text="The annotations the report reflects.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(max_length=100, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    result_json = models.TextField(blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["study", "parameters_key", "status"])]

    def __str__(self) -> str:
        return f"Agreement report of {self.study} ({self.language or 'all languages'})"
