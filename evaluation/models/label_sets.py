"""Label sets: frozen, versioned word labels made from emphasis studies (MMEE sections 2.3, 3, 4)."""

from django.conf import settings
from django.db import models

from annotation.models import Clip, Study
from annotation.models.background_job import BackgroundJob


class LabelSet(BackgroundJob):
    """Word labels for training and testing detectors, made from one or more emphasis studies.

    A worker builds its rows (the set is a background job); a researcher then finalizes it, which
    freezes the rows for good and records their checksum and the code version; new annotations
    make a new version, never an edit. A final set can be archived, never deleted. The
    parameters are stored as given (evaluation.services.label_sets.LabelSetParameters).
    """

    TASK_NAME = "evaluation.label_set_build"

    class Lifecycle(models.TextChoices):
        DRAFT = "draft"
        FINAL = "final"
        ARCHIVED = "archived"

    name = models.CharField(max_length=200)
    version = models.PositiveIntegerField()
    studies = models.ManyToManyField(Study, related_name="label_sets")
    parameters = models.JSONField()
    lifecycle = models.CharField(max_length=10, choices=Lifecycle.choices, default=Lifecycle.DRAFT)
    summary = models.JSONField(default=dict, blank=True, help_text="Sizes, what was left out and why, agreement.")
    annotator_model = models.JSONField(
        default=dict,
        blank=True,
        help_text="Model-based labels (empty when off): the model, when it was fitted, each annotator's reliability.",
    )
    checksum = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the rows as canonical JSON lines.")
    code_version = models.CharField(max_length=100, blank=True)
    finalized_at = models.DateTimeField(null=True, blank=True)
    finalized_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["name", "-version"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="label_set_unique_version")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    @property
    def is_final(self) -> bool:
        return self.lifecycle in (self.Lifecycle.FINAL, self.Lifecycle.ARCHIVED)


class LabelSetClip(models.Model):
    """One clip of a label set with its words' labels; written once, by the build."""

    label_set = models.ForeignKey(LabelSet, on_delete=models.CASCADE, related_name="clips")
    position = models.PositiveIntegerField(help_text="Order in the set: by study, then clip id.")
    clip = models.ForeignKey(Clip, on_delete=models.PROTECT, related_name="+")
    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="+")
    clip_key = models.CharField(max_length=200, help_text="The clip id used in the manifest.")
    split = models.CharField(max_length=10)
    language = models.CharField(max_length=35, blank=True)
    variety = models.CharField(max_length=35, blank=True)
    speaker = models.CharField(max_length=200, blank=True)
    emotion = models.CharField(max_length=64, blank=True)
    arousal = models.CharField(max_length=4, blank=True, help_text='"high", "low" or empty.')
    scale_step = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Training clips: the smallest data-scale percentage whose subset holds it."
    )
    duration = models.FloatField()
    annotators = models.JSONField(help_text="Opaque ids of the annotators, in the order of each word's levels.")
    # With an annotator model, each word also has its "posterior" (P(truly emphasized)).
    words = models.JSONField(help_text="Per word: index, text, start, end, binary, scalar, levels.")
    annotator_reliability = models.JSONField(
        null=True, blank=True, help_text="With an annotator model: [reliability, SE] per annotator, as `annotators`."
    )

    class Meta:
        ordering = ["label_set", "position"]
        constraints = [
            models.UniqueConstraint(fields=["label_set", "position"], name="label_set_clip_position"),
            models.UniqueConstraint(fields=["label_set", "clip"], name="label_set_clip_once"),
        ]
        indexes = [models.Index(fields=["label_set", "language", "split"])]

    def __str__(self) -> str:
        return f"{self.clip_key} in {self.label_set_id}"
