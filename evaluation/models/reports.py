"""Reports computed in the background and kept until new annotations or answers arrive."""

from django.db import models

from annotation.models import Study
from annotation.models.background_job import BackgroundJob


class AgreementReport(BackgroundJob):
    """One computation of a study's agreement report, for one scope and set of parameters.

    `fingerprint` describes the annotations it was computed from (evaluation.selectors.agreement_reports); a report
    whose fingerprint no longer matches the study's is stale and is computed again on request.
    `result_json` holds the canonical JSON text itself, so a download is byte for byte what was
    computed (a JSON column would reorder keys and reformat numbers).
    """

    TASK_NAME = "evaluation.agreement_report_run"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="agreement_reports")
    language = models.CharField(max_length=35, blank=True, help_text="Empty for the whole study.")
    parameters = models.JSONField(help_text="Subsample, seed, resamples, exclusions and thresholds.")
    parameters_key = models.CharField(max_length=64, help_text="SHA-256 of the canonical parameters.")
    fingerprint = models.CharField(max_length=200, help_text="The annotations the report reflects.")
    result_json = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["study", "parameters_key", "status"])]

    def __str__(self) -> str:
        return f"Agreement report of {self.study} ({self.language or 'all languages'})"


class ListeningFormReport(BackgroundJob):
    """One computation of a listening-form study's scores (evaluation.selectors.listening_form_reports).

    Kept until the study's answers change: `fingerprint` is listening_form_answers_fingerprint of what it
    was computed from. `result_json` is the canonical JSON text, as for AgreementReport.
    """

    TASK_NAME = "evaluation.listening_form_report_run"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="form_reports")
    fingerprint = models.CharField(max_length=200, help_text="The answers the report reflects.")
    result_json = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["study", "status"])]

    def __str__(self) -> str:
        return f"Listening-form scores of {self.study}"
