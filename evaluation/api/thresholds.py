"""Annotator-quality thresholds as a request gives them: only the ones to change, the others
keep the study's (the same four the admin's report and label-set forms offer)."""

from dataclasses import replace

from rest_framework import serializers

from evaluation.stats.quality import Thresholds


class ThresholdsSerializer(serializers.Serializer):
    min_kappa = serializers.FloatField(required=False, allow_null=True, help_text="Flag kappa below; null: never.")
    min_attention = serializers.FloatField(
        required=False, allow_null=True, min_value=0, max_value=1, help_text="Flag attention share below."
    )
    min_time_ratio = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        help_text="Flag a median time per clip below this multiple of the clip's duration.",
    )
    max_marked_share = serializers.FloatField(
        required=False, allow_null=True, min_value=0, max_value=1, help_text="Flag share of words marked above."
    )


def thresholds_with(defaults: Thresholds, given: dict | None) -> Thresholds:
    return replace(defaults, **(given or {}))
