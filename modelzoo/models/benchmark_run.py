"""Benchmark runs: one detector trained on a final label set and tested, by a GPU worker."""

import uuid
from datetime import timedelta

from django.db import models

from annotation.models.background_job import BackgroundJob
from annotation.models.webhooks import WebhookEvent
from evaluation.models import LabelSet
from modelzoo.plans import MODE_MEASURES
from modelzoo.training.detector_table import DETECTORS


class BenchmarkRun(BackgroundJob):
    """One trained model: a detector, a label mode and one MMEE setting on a final label set (and,
    for cross-dataset, tested on a second set), run by modelzoo.tasks on the `gpu` queue.

    **One run per trained model.** Settings that need several models (the cross-lingual matrix,
    the data-scale curve, both cross-arousal directions) are launched as several runs sharing a
    `group` id; the group's page gathers them into the matrix or the curve. So each model keeps
    its own progress, log, retry, cancellation, checkpoint and predictions, a failure costs one
    model rather than the whole matrix, and a single GPU worker takes them one after another.

    **Cancelling** sets `cancel_requested`; the worker's stop check reads it between steps. A
    cancelled run ends FAILED with error "cancelled" (see `cancelled`) rather than a fifth status:
    every job kind shares BackgroundJob's four statuses, and the runner, the stale-job sweep and the
    API's polling all rely on them.

    **Staleness.** The job runner's heartbeat thread beats every 15 s through every phase (loading
    a 1B-parameter backbone, training, evaluating, zipping and storing its checkpoint), so a run
    silent for STALE_AFTER has lost its worker process. 90 s (not the 30 minutes of other jobs)
    gives a dead GPU worker's run back within two minutes: every worker's periodic sweep (every 30 s,
    annotation.shared.jobs) queues it again.
    """

    TASK_NAME = "modelzoo.benchmark_run_train"
    WEBHOOK_EVENTS = {"succeeded": WebhookEvent.BENCHMARK_RUN_FINISHED, "failed": WebhookEvent.BENCHMARK_RUN_FAILED}
    STALE_AFTER = timedelta(seconds=90)
    CANCELLED = "cancelled"

    # From modelzoo.training.detector_table (ACOUSTIC, FRAME_CLASSIFIER, WHISPER_TOKENS): the admin's
    # form and the API offer these choices; their values and labels are those of migration 0001.
    Detector = models.TextChoices(
        "Detector",
        [(spec.choice_name, (spec.name, spec.label)) for spec in DETECTORS.values()],
        module=__name__,
        qualname="BenchmarkRun.Detector",
    )

    class LabelMode(models.TextChoices):
        BINARY = "binary", "binary (emphasized or not)"
        SCALAR = "scalar", "scalar (mean level, 0 to 1)"
        BOTH = "both", "both heads together"

    class Kind(models.TextChoices):
        MONOLINGUAL = "monolingual", "monolingual"
        CROSS_LINGUAL = "cross-lingual", "cross-lingual"
        MULTILINGUAL = "multilingual", "multilingual"
        CROSS_AROUSAL = "cross-arousal", "cross-arousal"
        DATA_SCALE = "data-scale", "data scale"
        CROSS_DATASET = "cross-dataset", "cross-dataset"

    class Arousal(models.TextChoices):  # cross-arousal's two regimes (MMEE section 4.3)
        HIGH = "high"
        LOW = "low"

    group = models.UUIDField(default=uuid.uuid4, db_index=True, help_text="Shared by the runs launched together.")
    label_set = models.ForeignKey(LabelSet, on_delete=models.PROTECT, related_name="benchmark_runs")
    test_label_set = models.ForeignKey(
        LabelSet,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Cross-dataset: the set whose test clips the model is tested on.",
    )
    detector = models.CharField(max_length=20, choices=Detector.choices)
    backbone = models.CharField(max_length=200, blank=True, help_text="Blank: the detector's default.")
    label_mode = models.CharField(max_length=8, choices=LabelMode.choices)
    setting_kind = models.CharField(max_length=16, choices=Kind.choices)
    setting = models.JSONField(help_text="modelzoo.training.experiments.Setting, as a dict.")
    setting_label = models.CharField(max_length=120)
    config_overrides = models.JSONField(
        default=dict,
        blank=True,
        help_text="Hyperparameters given to the detector: the label mode's, then the launcher's.",
    )
    devices = models.PositiveSmallIntegerField(
        default=1,
        help_text="Devices of one GPU worker's machine it trains on at once (data parallel, torchrun).",
    )
    resamples = models.PositiveIntegerField(default=1000, help_text="Clip bootstrap resamples of the intervals.")
    seed = models.PositiveIntegerField(default=0, help_text="Seed of the clip bootstrap.")
    cancel_requested = models.BooleanField(default=False)
    log = models.TextField(blank=True, help_text="The run's progress lines, every attempt.")
    # Written once, by the worker that finishes the run (annotation.shared.jobs stores them with the status).
    metrics = models.JSONField(null=True, blank=True, help_text="Pooled and per language, with 95 % intervals.")
    details = models.JSONField(
        default=dict, blank=True, help_text="Hyperparameters used, backbone, clips per split, history, seconds."
    )
    predictions = models.FileField(max_length=300, blank=True, help_text="Per-word test predictions (CSV).")
    predictions_count = models.PositiveIntegerField(default=0)
    checkpoint = models.FileField(max_length=300, blank=True, help_text="The trained detector's folder, zipped.")
    checkpoint_size = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(condition=models.Q(devices__gte=1), name="benchmark_devices_at_least_one"),
            models.CheckConstraint(
                condition=models.Q(setting_kind="cross-dataset", test_label_set__isnull=False)
                | (~models.Q(setting_kind="cross-dataset") & models.Q(test_label_set__isnull=True)),
                name="benchmark_test_set_for_cross_dataset_only",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.detector} {self.setting_label} on {self.label_set}"

    def webhook_data(self) -> dict:
        return {
            **super().webhook_data(),
            "benchmark_run": self.pk,
            "group": str(self.group),
            "detector": self.detector,
            "label_set": self.label_set_id,
        }

    @property
    def cancelled(self) -> bool:
        return self.status == self.Status.FAILED and self.error == self.CANCELLED

    @property
    def measures(self) -> tuple[str, ...]:
        """The measures of its label mode: accuracy and F1 for binary, Pearson for scalar."""
        return MODE_MEASURES[self.label_mode]
