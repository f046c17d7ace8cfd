"""Benchmark suites: the systems measured (models, TTS voices, judges, detectors) and what they gave.

StressTest and StanceBench outputs are answers to listening-form items (the humans answered the
same items); CAST has its own items, sentences with two contexts, rendered as audio by TTS
systems, whose stressed words detectors (and listeners) find. Rows are written by
evaluation.services.system_outputs and read by evaluation.selectors.suites.
"""

from django.db import models
from django.db.models import F, Q

from annotation.models import Clip, Corpus, ListeningFormItem


class System(models.Model):
    """A model, a TTS voice, a judge or a detector, by the name its outputs were imported under."""

    class Kind(models.TextChoices):
        MODEL = "model", "Model answering items (StressTest)"
        TTS = "tts", "Text-to-speech system (CAST)"
        JUDGE = "judge", "Stance judge (StanceBench)"
        DETECTOR = "detector", "Stress detector (CAST)"

    name = models.CharField(max_length=200, unique=True)
    version = models.CharField(max_length=100, blank=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} {self.version}".strip()


class SystemOutput(models.Model):
    """One answer of a system to one form item (StressTest, StanceBench), kept as imported."""

    class Suite(models.TextChoices):
        STRESSTEST = "stresstest", "StressTest"
        STANCE = "stance", "StanceBench"

    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="outputs")
    suite = models.CharField(max_length=10, choices=Suite.choices)
    form_item = models.ForeignKey(ListeningFormItem, on_delete=models.CASCADE, related_name="system_outputs")
    pole_order = models.CharField(
        max_length=2, blank=True, help_text='Stance: "PN" (positive pole shown first) or "NP"; empty otherwise.'
    )
    # Parsing is part of the score (an unparseable answer counts as wrong), so nothing is parsed here.
    raw = models.JSONField(help_text="The answer exactly as imported: a number, a text, a list or an object.")
    line = models.PositiveIntegerField(help_text="The JSONL line it came from.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["system", "form_item", "pole_order"]
        constraints = [
            models.UniqueConstraint(fields=["system", "form_item", "pole_order"], name="system_output_unique"),
        ]

    def __str__(self) -> str:
        order = f" ({self.pole_order})" if self.pole_order else ""
        return f"{self.system.name} on {self.form_item.external_id}{order}"


class CastSet(models.Model):
    """A CAST item set; its renditions' audio are clips of `corpus`, made on the first import."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    corpus = models.ForeignKey(
        Corpus, on_delete=models.PROTECT, null=True, blank=True, related_name="+", help_text="The renditions' clips."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "CAST set"

    def __str__(self) -> str:
        return self.name


class CastItem(models.Model):
    """A sentence and two contexts; context A calls for stress on word A, context B on word B."""

    cast_set = models.ForeignKey(CastSet, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200)
    sentence = models.TextField()
    words = models.JSONField(help_text="The sentence's words, as its renditions' clips have them.")
    context_a = models.TextField()
    context_b = models.TextField()
    word_a = models.PositiveIntegerField(help_text="Index into words of the word context A stresses.")
    word_b = models.PositiveIntegerField(help_text="Index into words of the word context B stresses.")
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["cast_set", "external_id"]
        verbose_name = "CAST item"
        constraints = [
            models.UniqueConstraint(fields=["cast_set", "external_id"], name="cast_item_unique_id_per_set"),
            models.CheckConstraint(condition=~Q(word_a=F("word_b")), name="cast_item_two_words"),
        ]

    def __str__(self) -> str:
        return self.external_id


class CastRendition(models.Model):
    """The audio one TTS system made of one item, for one side and one way of conditioning it."""

    class Side(models.TextChoices):
        A = "A", "Context A"
        B = "B", "Context B"

    class Mode(models.TextChoices):
        NONE = "none", "No context"
        CONTEXT = "context", "Context prepended"
        INSTRUCTION = "instruction", "Instruction"
        MARKUP = "markup", "Explicit stress markup"

    item = models.ForeignKey(CastItem, on_delete=models.CASCADE, related_name="renditions")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="renditions")
    side = models.CharField(max_length=1, choices=Side.choices)
    mode = models.CharField(max_length=12, choices=Mode.choices)
    # A foreign key, not one-to-one: a system that ignores the context makes the same audio for
    # both sides (mode "none"), and identical audio is one clip.
    clip = models.ForeignKey(Clip, on_delete=models.PROTECT, related_name="cast_renditions")
    line = models.PositiveIntegerField(default=0, help_text="The renditions.jsonl line it came from.")

    class Meta:
        ordering = ["item", "system", "side", "mode"]
        verbose_name = "CAST rendition"
        constraints = [
            models.UniqueConstraint(fields=["item", "system", "side", "mode"], name="cast_rendition_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.item.external_id}-{self.side}-{self.mode} by {self.system.name}"


class RenditionDetection(models.Model):
    """The words a detector found stressed in a rendition."""

    rendition = models.ForeignKey(CastRendition, on_delete=models.CASCADE, related_name="detections")
    detector = models.ForeignKey(System, on_delete=models.CASCADE, related_name="detections")
    stressed = models.JSONField(help_text="Sorted word indices.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["rendition", "detector"]
        constraints = [
            models.UniqueConstraint(fields=["rendition", "detector"], name="rendition_detection_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.detector.name} on {self.rendition}"
