"""Suite reports: one computation of a benchmark suite's scores, systems beside the humans."""

from django.db import models

from annotation.models import Study
from annotation.models.background_job import BackgroundJob


class SuiteReport(BackgroundJob):
    """The scores of one suite (evaluation.selectors.suites, evaluation.stats.suites), computed by a
    worker and kept until what they were computed from changes: `fingerprint` is
    evaluation.selectors.suites.suite_fingerprint of the inputs. StressTest and StanceBench reports
    belong to a listening-form study (its items, the humans' answers, the systems' outputs); a
    CAST report belongs to a CAST set (its renditions, the detectors' and the listeners' stressed
    words). `result_json` is canonical JSON text, as for the other reports.
    """

    TASK_NAME = "evaluation.suite_report_run"

    class Suite(models.TextChoices):
        STRESSTEST = "stresstest", "StressTest (SSR and SSD)"
        CAST = "cast", "CAST (discourse-conditioned TTS stress)"
        STANCE = "stance", "StanceBench (stance judges)"

    suite = models.CharField(max_length=10, choices=Suite.choices)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, null=True, blank=True, related_name="suite_reports")
    cast_set = models.ForeignKey(
        "evaluation.CastSet", on_delete=models.CASCADE, null=True, blank=True, related_name="reports"
    )
    resamples = models.PositiveIntegerField(default=1000, help_text="Bootstrap resamples of the intervals.")
    seed = models.PositiveIntegerField(default=0, help_text="Seed of the bootstrap.")
    fingerprint = models.CharField(max_length=200, help_text="The inputs the report reflects.")
    result_json = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["suite", "study", "cast_set", "status"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(suite="cast", cast_set__isnull=False, study__isnull=True)
                | (~models.Q(suite="cast") & models.Q(study__isnull=False, cast_set__isnull=True)),
                name="suite_report_one_subject",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_suite_display()} scores of {self.study or self.cast_set}"
