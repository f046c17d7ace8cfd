"""Clips with their words: GET /clips/?corpus=&language= and /clips/{id}/ (annotation.view_clip)."""

from django.db.models import Prefetch
from rest_framework import mixins, serializers

from annotation.models import Clip, Word
from annotation.shared.api.base import ApiViewSet


class WordSerializer(serializers.ModelSerializer):
    class Meta:
        model = Word
        fields = ["index", "text", "start", "end"]


class ClipSerializer(serializers.ModelSerializer):
    clip_id = serializers.CharField(source="external_id", read_only=True, help_text="The id used in the manifest.")
    speaker = serializers.CharField(source="speaker.name", read_only=True, allow_null=True, default=None)
    words = WordSerializer(many=True, read_only=True)

    class Meta:
        model = Clip
        fields = [
            "id",
            "corpus",
            "clip_id",
            "speaker",
            "language",
            "variety",
            "emotion",
            "duration",
            "tags",
            "transcript",
            "words",
        ]


class ClipViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    queryset = (
        Clip.objects.select_related("speaker")
        .prefetch_related(Prefetch("words", queryset=Word.objects.order_by("index")))
        .order_by("pk")
    )
    serializer_class = ClipSerializer
    filterset_fields = ["corpus", "language", "variety", "emotion"]
