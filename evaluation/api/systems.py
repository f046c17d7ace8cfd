"""Benchmark systems and their imports, through evaluation.services.system_outputs:

- GET /systems/, /systems/{id}/ (evaluation.view_system): the systems, with their output counts;
- GET /systems/{system_pk}/outputs/ (evaluation.view_systemoutput): one system's answers, as imported;
- POST /systems/upload/ (evaluation.add_systemoutput): multipart, a JSONL file of StressTest or
  StanceBench answers, or a .zip of CAST renditions (renditions.jsonl and the audio); 201 with
  the import's summary;
- GET /cast-sets/, /cast-sets/{id}/ (evaluation.view_castset); POST /cast-sets/upload/
  (evaluation.add_castitem): a JSONL file of CAST items.
An upload is the management command's import: atomic, and a refusal is the API's 400
(annotation.shared.api.errors.refusal_body): the command's message in "detail" and, for bad lines,
"problems" (the first 20: file, line, where, item, field, reason) and "more_problems" (how many
more).
"""

import re
from pathlib import Path

from django.conf import settings
from django.db.models import Count
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from annotation.models import Study
from annotation.refusals import Refused
from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.errors import REFUSED
from annotation.study_kinds import kinds_with
from annotation.uploads import upload_on_disk
from evaluation.ingest import system_outputs as reading
from evaluation.models import CastSet, System, SystemOutput
from evaluation.services.system_outputs import (
    SUITES,
    OutputsRefused,
    cast_items_import,
    metadata_argument,
    system_outputs_import,
)


class SystemSerializer(serializers.ModelSerializer):
    outputs = serializers.IntegerField(source="output_count", read_only=True, help_text="Answers to form items.")
    renditions = serializers.IntegerField(source="rendition_count", read_only=True, help_text="CAST renditions.")

    class Meta:
        model = System
        fields = ["id", "name", "version", "kind", "metadata", "outputs", "renditions", "created_at"]


@extend_schema_field(OpenApiTypes.STR)
class TextChoiceField(serializers.ChoiceField):
    """Checked like a ChoiceField, documented as text with its values in the help text: "suite" and
    "kind" name other choice sets elsewhere in this API, and one name must be one enum in the schema."""


class SystemOutputSerializer(serializers.ModelSerializer):
    suite = serializers.CharField(read_only=True, help_text="stresstest or stance.")
    item = serializers.CharField(source="form_item.external_id", help_text="The form item's id.")
    study = serializers.SlugRelatedField(source="form_item.study", slug_field="slug", read_only=True)
    raw = serializers.JSONField(help_text="The answer exactly as imported.")

    class Meta:
        model = SystemOutput
        fields = ["id", "suite", "study", "item", "pole_order", "raw", "line", "created_at"]


class OutputsUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="JSONL answers (stresstest, stance) or a .zip of renditions (cast).")
    suite = TextChoiceField(choices=SUITES, help_text=f"One of {', '.join(SUITES)}.")
    system = serializers.CharField(max_length=200, help_text="The system's name; a new name makes a new system.")
    version = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    kind = TextChoiceField(
        choices=System.Kind.choices,
        required=False,
        allow_blank=True,
        default="",
        help_text=f"One of {', '.join(System.Kind.values)}; default: the suite's (model, judge, tts).",
    )
    study = serializers.PrimaryKeyRelatedField(
        queryset=Study.objects.filter(kind__in=kinds_with("answers_are_choices")),
        required=False,
        allow_null=True,
        default=None,
        help_text="The listening-form study whose items are answered (stresstest, stance).",
    )
    cast_set = serializers.PrimaryKeyRelatedField(
        queryset=CastSet.objects.all(),
        required=False,
        allow_null=True,
        default=None,
        help_text="The CAST set rendered (cast).",
    )
    replace = serializers.BooleanField(default=False, help_text="Replace the system's outputs already there.")
    metadata = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="The system's free metadata: a JSON object as text, merged into what the system has.",
    )

    def validate_metadata(self, text: str) -> dict | None:
        if not text.strip():
            return None
        try:
            return metadata_argument(text)
        except OutputsRefused as error:
            raise serializers.ValidationError(str(error)) from None


class SystemViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    queryset = System.objects.annotate(
        output_count=Count("outputs", distinct=True), rendition_count=Count("renditions", distinct=True)
    ).order_by("name")
    serializer_class = SystemSerializer
    filterset_fields = ["name", "kind"]
    import_actions = frozenset({"upload"})

    @extend_schema(
        request={"multipart/form-data": OutputsUploadSerializer},
        responses={201: OpenApiTypes.OBJECT, 400: REFUSED},
    )
    @action(
        detail=False,
        methods=["post"],
        parser_classes=[MultiPartParser],
        required_perms=("evaluation.add_systemoutput",),
    )
    def upload(self, request):
        """Import a system's outputs, as import_system_outputs does; 201 with the summary."""
        given = OutputsUploadSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        return _imported(
            data["file"],
            lambda path: system_outputs_import(
                path=path,
                suite=data["suite"],
                system_name=data["system"],
                version=data["version"],
                kind=data["kind"],
                study=data["study"],
                cast_set=data["cast_set"],
                replace=data["replace"],
                metadata=data["metadata"],
            ),
        )


class SystemOutputViewSet(mixins.ListModelMixin, ApiViewSet):
    queryset = SystemOutput.objects.all()
    serializer_class = SystemOutputSerializer
    filterset_fields = ["suite", "pole_order"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no system
            return SystemOutput.objects.none()
        system = get_object_or_404(System, pk=self.kwargs["system_pk"])
        return system.outputs.select_related("form_item__study").order_by("line", "pk")


class CastSetSerializer(serializers.ModelSerializer):
    items = serializers.IntegerField(source="item_count", read_only=True)
    corpus = serializers.SlugRelatedField(slug_field="name", read_only=True, help_text="The renditions' corpus.")

    class Meta:
        model = CastSet
        fields = ["id", "name", "description", "corpus", "items", "created_at"]


class CastItemsUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="JSONL: id, sentence, context_a, context_b, word_a, word_b, words, metadata."
    )
    set = serializers.CharField(max_length=200, help_text="The CAST set's name; made if new.")


class CastSetViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    queryset = CastSet.objects.select_related("corpus").annotate(item_count=Count("items")).order_by("name")
    serializer_class = CastSetSerializer
    filterset_fields = ["name"]
    import_actions = frozenset({"upload"})

    @extend_schema(
        request={"multipart/form-data": CastItemsUploadSerializer},
        responses={201: OpenApiTypes.OBJECT, 400: REFUSED},
    )
    @action(
        detail=False, methods=["post"], parser_classes=[MultiPartParser], required_perms=("evaluation.add_castitem",)
    )
    def upload(self, request):
        """Add CAST items to a set, as import_cast_items does; 201 with the summary."""
        given = CastItemsUploadSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        set_name = given.validated_data["set"]
        return _imported(given.validated_data["file"], lambda path: cast_items_import(path=path, set_name=set_name))


def _imported(upload, service) -> Response:
    """Run `service` on the uploaded file, saved under its own name (the messages name it); its
    refusals (SourceRefused, ImportRefused, OutputsRefused) are the API's refusal body."""
    limit = settings.IMPORT_MAX_ARCHIVE_BYTES if _is_zip(upload.name) else reading.MAX_FILE_BYTES
    if upload.size > limit:
        raise Refused(f"{upload.name} is {upload.size} bytes; the limit is {limit}")
    with upload_on_disk(upload, name=_safe_name(upload.name)) as path:
        summary = service(path)
    return Response(summary, status=status.HTTP_201_CREATED)


def _is_zip(name: str) -> bool:
    return (name or "").lower().endswith(".zip")


def _safe_name(name: str) -> str:
    # Only the last part, in safe characters: the name is the client's and becomes a path here.
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name or "").name).strip("._")
    return cleaned[:100] or "upload.jsonl"
