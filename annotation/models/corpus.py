"""Corpora: clips of speech, their words, their speakers, and how they got in."""

from django.db import models

from annotation.models.background_job import BackgroundJob


class Corpus(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "corpora"

    def __str__(self) -> str:
        return self.name


class Speaker(models.Model):
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="speakers")
    name = models.CharField(max_length=200, help_text="The speaker id used in the manifest.")
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["corpus", "name"]
        constraints = [
            models.UniqueConstraint(fields=["corpus", "name"], name="speaker_unique_per_corpus"),
        ]

    def __str__(self) -> str:
        return self.name


class Clip(models.Model):
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="clips")
    external_id = models.CharField(max_length=200, help_text="The clip id used in the manifest.")
    speaker = models.ForeignKey(Speaker, on_delete=models.PROTECT, null=True, blank=True, related_name="clips")
    transcript = models.TextField()
    language = models.CharField(max_length=35, blank=True, db_index=True)
    variety = models.CharField(max_length=35, blank=True, db_index=True, help_text="Regional variety, e.g. pt-BR.")
    emotion = models.CharField(max_length=64, blank=True, db_index=True, help_text="Emotion or speaking style.")
    source_path = models.CharField(max_length=500, help_text="Audio path in the manifest.")
    original_audio = models.FileField(max_length=300, help_text="The file as imported.")
    model_audio = models.FileField(max_length=300, help_text="16 kHz mono 16-bit WAV for models.")
    browser_audio = models.FileField(max_length=300, help_text="MP3 copy that browsers play.")
    duration = models.FloatField(help_text="Seconds.")
    sample_rate = models.PositiveIntegerField(help_text="Sample rate of the original file, Hz.")
    channels = models.PositiveSmallIntegerField(default=1)
    checksum = models.CharField(max_length=64, db_index=True, help_text="SHA-256 of the original file.")
    tags = models.JSONField(default=list, blank=True, help_text="Free labels for selecting clips into studies.")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["corpus", "external_id"]
        constraints = [
            models.UniqueConstraint(fields=["corpus", "external_id"], name="clip_unique_id_per_corpus"),
        ]

    def __str__(self) -> str:
        return self.external_id


class Word(models.Model):
    clip = models.ForeignKey(Clip, on_delete=models.CASCADE, related_name="words")
    index = models.PositiveIntegerField()
    text = models.CharField(max_length=200)
    start = models.FloatField(null=True, blank=True, help_text="Seconds from the clip's start.")
    end = models.FloatField(null=True, blank=True, help_text="Seconds from the clip's start.")

    class Meta:
        ordering = ["clip", "index"]
        constraints = [
            models.UniqueConstraint(fields=["clip", "index"], name="word_unique_index_per_clip"),
        ]

    def __str__(self) -> str:
        return self.text


class ClipWarning(models.Model):
    """A signal problem found at import; informs curation, never blocks it."""

    class Code(models.TextChoices):
        LEADING_SILENCE = "leading_silence", "Leading silence over 1 s"
        TRAILING_SILENCE = "trailing_silence", "Trailing silence over 1 s"
        CLIPPING = "clipping", "Clipping"
        ABRUPT_START = "abrupt_start", "Abrupt start"
        ABRUPT_END = "abrupt_end", "Abrupt end"
        SHORT_WORD = "short_word", "Word shorter than 50 ms"
        LOW_SAMPLE_RATE = "low_sample_rate", "Low sample rate"

    clip = models.ForeignKey(Clip, on_delete=models.CASCADE, related_name="warnings")
    code = models.CharField(max_length=32, choices=Code.choices, db_index=True)
    detail = models.CharField(max_length=300)

    class Meta:
        ordering = ["clip", "code"]
        constraints = [
            models.UniqueConstraint(fields=["clip", "code"], name="warning_unique_code_per_clip"),
        ]

    def __str__(self) -> str:
        return f"{self.get_code_display()}: {self.detail}"


class ImportJob(BackgroundJob):
    """A corpus archive uploaded in the admin, imported by a background worker."""

    TASK_NAME = "annotation.corpus_import_run"

    corpus_name = models.CharField(max_length=200)
    archive = models.FileField(max_length=300, blank=True)
    archive_name = models.CharField(max_length=300, help_text="Name of the uploaded file.")
    skip_invalid = models.BooleanField(default=False)
    summary = models.JSONField(default=dict, blank=True)
    problems = models.JSONField(default=list, blank=True, help_text="Rows refused, with reasons.")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Import of {self.archive_name} into {self.corpus_name}"
