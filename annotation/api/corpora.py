"""Corpora: GET /corpora/ and /corpora/{id}/ (annotation.view_corpus)."""

from django.db.models import Count
from rest_framework import mixins, serializers

from annotation.models import Corpus
from annotation.shared.api.base import ApiViewSet


class CorpusSerializer(serializers.ModelSerializer):
    clips = serializers.IntegerField(source="clip_count", read_only=True, help_text="Clips in the corpus.")

    class Meta:
        model = Corpus
        fields = ["id", "name", "description", "clips", "created_at"]


class CorpusViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    queryset = Corpus.objects.annotate(clip_count=Count("clips")).order_by("name")
    serializer_class = CorpusSerializer
    filterset_fields = ["name"]
