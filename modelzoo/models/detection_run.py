"""Detection runs: a trained detector (a succeeded benchmark run's checkpoint) run over clips that
are not in a label set, by a GPU worker, its predictions stored as a benchmark system's outputs."""

from datetime import timedelta

from django.db import models
from django.db.models import Q

from annotation.models import Study
from annotation.models.background_job import BackgroundJob
from evaluation.models import CastSet, System
from modelzoo.models.benchmark_run import BenchmarkRun


class DetectionRun(BackgroundJob):
    """The detector `source_run` trained, loaded from its checkpoint and run over the clips of one
    target, exactly one of:

    - `study`, a listening form: its stressed_words items' clips (StressTest's stressed-word
      detection, SSD); each item gets one evaluation.SystemOutput, the indices of the words the
      detector found stressed;
    - `cast_set`, a CAST set: its renditions' clips; each rendition gets one
      evaluation.RenditionDetection.

    The outputs belong to the System of kind "detector" named after the source run (`system`, set
    when the run succeeds). Running a detector over a target again replaces that system's outputs
    on it, in one transaction.

    **Staleness.** As for benchmark runs: the job runner's heartbeat thread beats through loading
    and prediction, so 90 s of silence means its worker process is gone.
    """

    TASK_NAME = "modelzoo.detection_run_predict"
    STALE_AFTER = timedelta(seconds=90)

    source_run = models.ForeignKey(
        BenchmarkRun,
        on_delete=models.PROTECT,
        related_name="detection_runs",
        help_text="A succeeded benchmark run: its checkpoint is the detector.",
    )
    study = models.ForeignKey(
        Study,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="detection_runs",
        help_text="A listening form: the clips of its stressed_words items.",
    )
    cast_set = models.ForeignKey(
        CastSet,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="detection_runs",
        help_text="A CAST set: its renditions' clips.",
    )
    language = models.CharField(
        max_length=35,
        blank=True,
        help_text="The language of clips that have none (word times are aligned per language). Blank: none.",
    )
    # Written once, by the worker that finishes the run (annotation.shared.jobs stores them with the status).
    system = models.ForeignKey(
        System,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="detection_runs",
        help_text="The detector as a benchmark system: its outputs are the predictions.",
    )
    outputs_count = models.PositiveIntegerField(default=0, help_text="Items or renditions given a prediction.")
    clips_count = models.PositiveIntegerField(default=0, help_text="Clips the detector ran over.")
    words_count = models.PositiveIntegerField(default=0, help_text="Words of those items or renditions.")
    stressed_count = models.PositiveIntegerField(default=0, help_text="Of those, the words predicted stressed.")

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(study__isnull=False, cast_set__isnull=True) | Q(study__isnull=True, cast_set__isnull=False),
                name="detection_run_one_target",
            )
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.source_run.detector} #{self.source_run_id} on {self.target}"

    @property
    def target(self) -> Study | CastSet:
        return self.study if self.study_id is not None else self.cast_set

    @property
    def target_label(self) -> str:
        kind = "listening form" if self.study_id is not None else "CAST set"
        return f"{kind} {self.target}"
