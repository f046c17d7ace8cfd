"""Dataset exports, through evaluation.services.dataset_exports:

- POST /dataset-exports/ (evaluation.add_datasetexport, and the right to read what is exported:
  evaluation.view_labelset for a label set, annotation.view_annotation for a study's raw
  annotations, annotation.change_participant with Prolific ids): 202 with the export to poll;
- GET /dataset-exports/, /dataset-exports/{id}/ (evaluation.view_datasetexport);
- GET /dataset-exports/{id}/link/ (evaluation.view_datasetexport, and the same right to read what
  it holds as asking for it): a short-lived download link,
  which needs no credentials, as a presigned S3 URL.
"""

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.models import Study
from annotation.shared.access import require_perm
from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.errors import REFUSED, NotReady
from annotation.shared.api.jobs import JOB_FIELDS, JobRetrieveMixin
from evaluation.access import export_read_perms, may_download_export
from evaluation.models import DatasetExport, LabelSet
from evaluation.services.dataset_exports import (
    LINK_TTL_SECONDS,
    dataset_export_link,
    dataset_export_request,
)


class ExportRequestSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=DatasetExport.Format.choices)
    label_set = serializers.PrimaryKeyRelatedField(
        queryset=LabelSet.objects.all(),
        required=False,
        allow_null=True,
        help_text="A final label set, for every format but raw.",
    )
    study = serializers.PrimaryKeyRelatedField(
        queryset=Study.objects.all(), required=False, allow_null=True, help_text="A study, for the raw format."
    )
    include_prolific_ids = serializers.BooleanField(
        default=False,
        help_text="Raw exports: Prolific ids instead of opaque ids (needs annotation.change_participant).",
    )


class ExportSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:dataset-export-detail")
    link_url = serializers.HyperlinkedIdentityField(
        view_name="api:dataset-export-link", help_text="Where to get a download link once succeeded."
    )

    class Meta:
        model = DatasetExport
        fields = [
            "id",
            "url",
            "link_url",
            "format",
            "label_set",
            "study",
            "include_prolific_ids",
            "file_name",
            "size",
            "sha256",
            *JOB_FIELDS,
        ]


class ExportLinkSerializer(serializers.Serializer):
    url = serializers.URLField(help_text="Download the zip from here; no credentials needed.")
    expires_in = serializers.IntegerField(help_text="Seconds the link stays valid.")


class DatasetExportViewSet(mixins.ListModelMixin, JobRetrieveMixin, ApiViewSet):
    queryset = DatasetExport.objects.order_by("-created_at", "-pk")
    serializer_class = ExportSerializer
    filterset_fields = ["format", "status", "label_set", "study"]

    @extend_schema(request=ExportRequestSerializer, responses={202: ExportSerializer})
    def create(self, request):
        given = ExportRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        _require_read_perms(request, given.validated_data)
        export = dataset_export_request(**given.validated_data, user=request.user)
        export.refresh_from_db()  # a worker in this process (eager tasks) may have built it already
        body = self.get_serializer(export).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": str(body["url"])})

    @extend_schema(responses={200: ExportLinkSerializer, 400: REFUSED})
    @action(detail=True, methods=["get"], required_perms=("evaluation.view_datasetexport",))
    def link(self, request, pk: int):
        """A fresh download link for a succeeded export, for one who may read what it holds (as asking
        for it needs); 409 while it is not built, with Retry-After while it is being built, as every
        download answers."""
        export = _downloadable(request, self.get_object())
        if export.status != DatasetExport.Status.SUCCEEDED:
            raise NotReady(export, what=f"Export {export.pk}")
        url = dataset_export_link(export=export)
        # Locally the link is a path on this server; on S3 it is already absolute.
        return Response({"url": request.build_absolute_uri(url), "expires_in": LINK_TTL_SECONDS})


def _downloadable(request, export: DatasetExport) -> DatasetExport:
    if not may_download_export(request.user, export):
        raise PermissionDenied  # as every refusal of the API, in its standard words
    return export


def _require_read_perms(request, given: dict) -> None:
    """An export copies what it holds: asking for one needs the right to read it."""
    perms = export_read_perms(
        label_set=given.get("label_set") is not None,
        study=given.get("study") is not None,
        include_prolific_ids=given["include_prolific_ids"],
    )
    for perm in perms:
        require_perm(request, perm)
