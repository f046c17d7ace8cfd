"""A label set's rows: GET /label-sets/{label_set_pk}/rows/ (evaluation.view_labelset), one clip
with its words' labels per row, in the set's order and in the shape of a line of its JSONL export,
filterable by split, language, variety and emotion."""

import django_filters
from django.shortcuts import get_object_or_404
from rest_framework import mixins, serializers

from annotation.shared.api.base import ApiViewSet
from evaluation.models import LabelSet, LabelSetClip


class WordLabelSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    text = serializers.CharField()
    start = serializers.FloatField(allow_null=True)
    end = serializers.FloatField(allow_null=True)
    binary = serializers.BooleanField(help_text="Emphasized by a majority of the annotators.")
    scalar = serializers.FloatField(help_text="Mean score of the levels.")
    levels = serializers.ListField(child=serializers.IntegerField(), help_text="0, 1 or 2, one per annotator.")


class LabelSetRowSerializer(serializers.ModelSerializer):
    """One clip, in the shape of a line of the set's JSONL export."""

    clip_id = serializers.CharField(source="clip_key")
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    annotators = serializers.ListField(child=serializers.CharField(), help_text="Opaque ids, in levels order.")
    words = WordLabelSerializer(many=True)

    class Meta:
        model = LabelSetClip
        fields = [
            "position",
            "clip_id",
            "study",
            "split",
            "language",
            "variety",
            "speaker",
            "emotion",
            "arousal",
            "scale_step",
            "duration",
            "annotators",
            "words",
        ]


class LabelSetRowFilter(django_filters.FilterSet):
    class Meta:
        model = LabelSetClip
        fields = ["split", "language", "variety", "emotion"]


class LabelSetRowViewSet(mixins.ListModelMixin, ApiViewSet):
    queryset = LabelSetClip.objects.all()
    serializer_class = LabelSetRowSerializer
    filterset_class = LabelSetRowFilter
    required_perms = ("evaluation.view_labelset",)  # rows are read as part of their set

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no label set
            return LabelSetClip.objects.none()
        label_set = get_object_or_404(LabelSet, pk=self.kwargs["label_set_pk"])
        return label_set.clips.select_related("study").order_by("position")
