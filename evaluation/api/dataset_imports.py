"""POST /api/v1/dataset-imports/: a public emphasis dataset uploaded as a .zip, imported as
import_emphasis_dataset does (multipart):

- `format` emphassess, tinystress or stresstest: a corpus and a label set (final unless `draft`),
  with its provenance; needs evaluation.add_labelset;
- `format` morrison: a corpus and a closed binary study of the crowd's annotations (and, with
  `label_set`, its final label set); needs annotation.add_study too.
The archive holds the dataset file(s) (`data`, a path inside it; default gold_df.json,
annotations.json, or the whole archive for the Hugging Face layouts: Parquet, a save_to_disk
folder, .jsonl) and the audio (`audio`, a folder inside it; default its root; not needed where the
Parquet or Arrow files embed it). Atomic: a refusal is the API's 400
(annotation.shared.api.errors.refusal_body), the command's message in "detail" and the first bad
records in "problems" (where, item, field, reason); nothing is written. With `skip_invalid` the
bad records are left out instead and listed in the answer's "skipped", each with its reason.
Synchronous: the upload is limited to IMPORT_MAX_ARCHIVE_BYTES as it arrives, and so is what it
expands to (annotation/uploads.py: at most twice that of temporary disk); a user has at most
IMPORT_MAX_CONCURRENT_PER_USER imports under way (429 past it).
"""

from pathlib import Path

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from annotation.ingest.source import relative_path_problem
from annotation.refusals import Refused
from annotation.shared.access import require_perm
from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.errors import REFUSED
from annotation.uploads import uploaded_archive
from evaluation.api.label_sets import LabelSetSerializer
from evaluation.api.systems import TextChoiceField
from evaluation.ingest.emphasis_datasets import FORMATS
from evaluation.models import LabelSet
from evaluation.services.dataset_uploads import (
    CROWD_FORMAT,
    STUDY_PERMISSION,
    DatasetUpload,
    dataset_upload_import,
)
from evaluation.services.label_set_imports import SPLIT_MODES


class DatasetImportSerializer(serializers.Serializer):
    archive = serializers.FileField(help_text="A .zip holding the dataset file(s) and the audio files.")
    format = TextChoiceField(
        choices=[*FORMATS, CROWD_FORMAT], help_text=f"One of {', '.join([*FORMATS, CROWD_FORMAT])}."
    )
    name = serializers.CharField(max_length=200, help_text="The label set's name (morrison: the study's).")
    data = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="The dataset file or folder inside the archive."
    )
    audio = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="The audio folder inside the archive (default: root)."
    )
    corpus = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    splits = serializers.ChoiceField(choices=SPLIT_MODES, default="given")
    split_seed = serializers.IntegerField(min_value=0, default=0)
    label_source = serializers.ChoiceField(choices=LabelSet.LabelSource.choices, required=False, allow_null=True)
    draft = serializers.BooleanField(default=False, help_text="Leave the label set a draft.")
    label_set = serializers.CharField(
        max_length=200, required=False, default="", allow_blank=True, help_text="morrison: also make this label set."
    )
    keep_all_annotators = serializers.BooleanField(default=False, help_text="morrison: skip the annotator filters.")
    skip_invalid = serializers.BooleanField(
        default=False,
        help_text="Import the records that can be and list each bad one in `skipped`, instead of refusing them all.",
    )

    def validate(self, values: dict) -> dict:
        for name in ("data", "audio"):
            problem = relative_path_problem(values[name]) if values[name] else None
            if problem:
                raise serializers.ValidationError({name: f"{values[name]!r} {problem}"})
        if not values["archive"].name.lower().endswith(".zip"):
            raise serializers.ValidationError({"archive": "must be a .zip"})
        if values["archive"].size > settings.IMPORT_MAX_ARCHIVE_BYTES:
            limit = settings.IMPORT_MAX_ARCHIVE_BYTES
            raise serializers.ValidationError({"archive": f"is {values['archive'].size} bytes; the limit is {limit}"})
        return values


class DatasetProblemSerializer(serializers.Serializer):
    where = serializers.CharField(help_text='The file and record, e.g. "gold_df.json line 3".')
    clip_id = serializers.CharField()
    field = serializers.CharField()
    reason = serializers.CharField()


class DatasetImportedSerializer(serializers.Serializer):
    format = serializers.CharField()
    skipped = DatasetProblemSerializer(
        many=True, help_text="The records left out with skip_invalid (where, clip, field, reason); empty otherwise."
    )
    label_set = LabelSetSerializer(allow_null=True, help_text="The set made; null for morrison without label_set.")
    study = serializers.IntegerField(allow_null=True, help_text="morrison: the closed binary study made.")
    summary = serializers.DictField(help_text="The set's summary, or the crowd import's (clips, annotators, rejected).")


class DatasetImportViewSet(ApiViewSet):
    queryset = LabelSet.objects.none()  # POST needs evaluation.add_labelset (morrison: annotation.add_study too)
    parser_classes = [MultiPartParser]
    import_actions = frozenset({"create"})

    @extend_schema(
        request={"multipart/form-data": DatasetImportSerializer},
        responses={
            201: DatasetImportedSerializer,
            400: REFUSED,
        },
    )
    def create(self, request):
        """Import a published emphasis dataset, as import_emphasis_dataset does."""
        given = DatasetImportSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        values = given.validated_data
        if values["format"] == CROWD_FORMAT:
            require_perm(request, STUDY_PERMISSION)
        try:
            with uploaded_archive(values["archive"]) as root:
                body = self._import(request, values, root)
        except FileNotFoundError as missing:  # a `data` or `audio` path the archive does not hold
            raise Refused(str(missing)) from None
        return Response(body, status=status.HTTP_201_CREATED)

    def _import(self, request, values: dict, root: Path) -> dict:
        upload = DatasetUpload(
            format=values["format"],
            name=values["name"],
            archive_name=values["archive"].name,
            data=values["data"],
            audio=values["audio"],
            corpus=values["corpus"],
            splits=values["splits"],
            split_seed=values["split_seed"],
            label_source=values.get("label_source"),
            draft=values["draft"],
            label_set=values["label_set"],
            keep_all_annotators=values["keep_all_annotators"],
            skip_invalid=values["skip_invalid"],
        )
        result = dataset_upload_import(upload=upload, root=root, user=request.user)
        shown = LabelSetSerializer(result.label_set, context={"request": request}).data if result.label_set else None
        return {
            "format": values["format"],
            "label_set": shown,
            "study": result.study.pk if result.study else None,
            "summary": result.summary,
            "skipped": result.skipped,
        }
