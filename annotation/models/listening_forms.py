"""Listening-form items: questions about one or two clips, answered by choosing."""

from django.db import models

from annotation.models.corpus import Clip
from annotation.models.study import Study


class ListeningFormItem(models.Model):
    class Type(models.TextChoices):
        SINGLE_CHOICE = "single_choice", "Single choice among written options"
        PAIRWISE = "pairwise", "A/B preference between two clips"
        RATING = "rating", "Rating on a labelled scale or a 0-100 slider"
        STANCE = "stance", "Stance pole pair with a confidence"
        STRESSED_WORDS = "stressed_words", "Mark the stressed words"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="form_items")
    external_id = models.CharField(max_length=200)
    item_type = models.CharField(max_length=16, choices=Type.choices)
    prompt = models.TextField(blank=True, help_text="The question shown above the answers.")
    clip = models.ForeignKey(Clip, on_delete=models.PROTECT, related_name="+", help_text="The (first) stimulus.")
    second_clip = models.ForeignKey(
        Clip, on_delete=models.PROTECT, null=True, blank=True, related_name="+", help_text="Clip B of a pair."
    )
    options = models.JSONField(
        default=list,
        blank=True,
        help_text="single_choice: the written options; rating: the scale labels (empty for a 0-100 slider).",
    )
    settings = models.JSONField(
        default=dict,
        blank=True,
        help_text='pairwise: {"allow_tie": true}; stance: {"dimension", "positive", "negative", '
        '"positive_definition", "negative_definition"}; rating: {"values": [...]}.',
    )
    gold = models.JSONField(null=True, blank=True, help_text="The correct answer. Never sent to participants.")
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["study", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["study", "external_id"], name="form_item_unique_id_per_study"),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} ({self.get_item_type_display()})"

    @property
    def is_attention_check(self) -> bool:
        """Set with settings {"attention_check": true}; answered by everyone, never scored."""
        return bool(self.settings.get("attention_check"))

    def passed_by(self, levels: list[int], response: dict) -> bool:
        """Did this answer give the gold answer (for attention checks)?"""
        if self.item_type == self.Type.STRESSED_WORDS:
            return levels == self.gold
        key = {"single_choice": "choice", "pairwise": "prefer", "rating": "value", "stance": "pole"}[self.item_type]
        return response.get(key) == self.gold

    @property
    def clips(self) -> list[Clip]:
        return [self.clip] if self.second_clip_id is None else [self.clip, self.second_clip]
