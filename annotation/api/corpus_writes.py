"""Corpus imports and a corpus's clips and words, through annotation.services.corpus_import_jobs:

- POST /import-jobs/ (annotation.add_importjob): multipart, a corpus .zip (`archive`) or the name
  of a folder on the configured storage (`folder`); 202 with the queued import job, which a worker
  runs as the admin's upload does;
- GET /import-jobs/, /import-jobs/{id}/ (annotation.view_importjob): poll it: status, phase,
  done/total, and when it ends the summary, or why it failed with every bad row (file, line, clip,
  field, reason);
- GET /corpora/{corpus_pk}/clips/ (annotation.view_clip): the corpus's clips with their words;
- GET /corpora/{corpus_pk}/words/ (annotation.view_clip): its words, one row a word.
"""

from django.db import transaction
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from annotation.api.clips import ClipSerializer
from annotation.models import Clip, Corpus, ImportJob, Word
from annotation.services.corpus_import_jobs import corpus_import_create
from annotation.services.storage_folders import storage_folder_zip
from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.jobs import JOB_FIELDS, JobRetrieveMixin


class ImportProblemSerializer(serializers.Serializer):
    file = serializers.CharField(required=False, help_text="The manifest the row is in.")
    line = serializers.IntegerField()
    clip_id = serializers.CharField(allow_blank=True)
    field = serializers.CharField(allow_blank=True)
    reason = serializers.CharField()


class ImportJobSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:import-job-detail")
    corpus = serializers.SerializerMethodField(help_text="The corpus's id, once the import has made it.")
    problems = ImportProblemSerializer(
        many=True, read_only=True, help_text="Bad rows: left out (skip_invalid), or why nothing was imported."
    )

    class Meta:
        model = ImportJob
        fields = ["id", "url", "corpus_name", "corpus", "archive_name", "skip_invalid", "summary", "problems"]
        fields += JOB_FIELDS

    def get_corpus(self, job) -> int | None:
        return Corpus.objects.filter(name=job.corpus_name).values_list("pk", flat=True).first()


class ImportUploadSerializer(serializers.Serializer):
    corpus_name = serializers.CharField(
        max_length=200, help_text="A new name makes a new corpus; a known one adds to it."
    )
    archive = serializers.FileField(required=False, help_text="A .zip: manifest.jsonl or manifest.csv and the audio.")
    folder = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=500,
        help_text="Instead of `archive`: a folder on the configured storage (relative, e.g. incoming/corpus-a).",
    )
    skip_invalid = serializers.BooleanField(default=False, help_text="Import the good rows, report the bad ones.")

    def validate(self, data):
        if bool(data.get("archive")) == bool((data.get("folder") or "").strip()):
            raise ValidationError({"archive": ["Give either an archive or a storage folder, not both, not neither."]})
        return data


class ImportJobViewSet(mixins.ListModelMixin, JobRetrieveMixin, ApiViewSet):
    queryset = ImportJob.objects.order_by("-created_at", "-pk")
    serializer_class = ImportJobSerializer
    filterset_fields = ["status", "corpus_name"]
    parser_classes = [MultiPartParser]
    import_actions = frozenset({"create"})

    @extend_schema(request={"multipart/form-data": ImportUploadSerializer}, responses={202: ImportJobSerializer})
    def create(self, request):
        """Queue a corpus import; a worker runs it (poll the job's url)."""
        given = ImportUploadSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            with transaction.atomic():
                job = self._queued(data, request.user)
        except ValueError as refusal:
            raise ValidationError({"archive" if data.get("archive") else "folder": [str(refusal)]}) from None
        body = self.get_serializer(job).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": str(body["url"])})

    @staticmethod
    def _queued(data: dict, user) -> ImportJob:
        options = {"corpus_name": data["corpus_name"], "skip_invalid": data["skip_invalid"], "user": user}
        if data.get("archive"):
            return corpus_import_create(upload=data["archive"], **options)
        with storage_folder_zip(data["folder"]) as zipped:
            return corpus_import_create(upload=zipped, **options)


class CorpusScopedViewSet(mixins.ListModelMixin, ApiViewSet):
    """Rows of one corpus (the URL's corpus_pk), read under annotation.view_clip."""

    required_perms = ("annotation.view_clip",)

    @property
    def corpus(self) -> Corpus:
        if not hasattr(self, "_corpus"):
            self._corpus = get_object_or_404(Corpus, pk=self.kwargs["corpus_pk"])
        return self._corpus


class CorpusClipViewSet(CorpusScopedViewSet):
    queryset = Clip.objects.all()
    serializer_class = ClipSerializer
    filterset_fields = ["language", "variety", "emotion"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no corpus
            return Clip.objects.none()
        words = Prefetch("words", queryset=Word.objects.order_by("index"))
        return Clip.objects.filter(corpus=self.corpus).select_related("speaker").prefetch_related(words).order_by("pk")


class CorpusWordSerializer(serializers.ModelSerializer):
    clip = serializers.IntegerField(source="clip_id", help_text="The clip's API id.")
    clip_id = serializers.CharField(source="clip.external_id", help_text="The clip's id in its manifest.")
    language = serializers.CharField(source="clip.language")

    class Meta:
        model = Word
        fields = ["clip", "clip_id", "language", "index", "text", "start", "end"]


class CorpusWordViewSet(CorpusScopedViewSet):
    queryset = Word.objects.all()
    serializer_class = CorpusWordSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Word.objects.none()
        return Word.objects.filter(clip__corpus=self.corpus).select_related("clip").order_by("clip_id", "index")
