"""Agreement reports: POST /agreement-reports/ (evaluation.add_agreementreport) asks for one, with
the study's defaults for every parameter not given, and answers 202 with the report to poll;
GET /agreement-reports/{id}/ (evaluation.view_agreementreport) shows its progress and, once
succeeded, its result. A report already computed for the same parameters and annotations is
returned as it is (evaluation.services.agreement_reports.agreement_report_request)."""

import json

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.models import Study
from annotation.participant_names import sees_prolific_ids
from annotation.selectors.study_data import study_languages, study_thresholds
from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.errors import NotReady
from annotation.shared.api.jobs import JOB_FIELDS, JobRetrieveMixin
from evaluation.api.thresholds import ThresholdsSerializer, thresholds_with
from evaluation.models import AgreementReport
from evaluation.reports.drilldown import SORTABLE, clip_rows
from evaluation.selectors.clip_marks import clip_marks
from evaluation.services.agreement_reports import agreement_report_request, report_parameters


class ReportParametersSerializer(serializers.Serializer):
    """Field names are those of report_parameters(); the bounds are the report page's."""

    language = serializers.CharField(
        required=False, allow_blank=True, allow_null=True, help_text="One of the study's languages; empty: all."
    )
    subsample = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=2,
        max_value=1000,
        help_text="Annotations per clip (clips with fewer are left out); null uses all. "
        "Default: null, every usable annotation.",
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**32 - 1)
    resamples = serializers.IntegerField(
        required=False, min_value=0, max_value=20_000, help_text="Clip bootstrap resamples; 0 for none."
    )
    exclude_flagged = serializers.BooleanField(required=False, help_text="Leave out flagged annotators.")
    thresholds = ThresholdsSerializer(required=False, help_text="Default: the study's review thresholds.")


class ReportRequestSerializer(serializers.Serializer):
    study = serializers.PrimaryKeyRelatedField(queryset=Study.objects.all(), help_text="An emphasis study.")
    parameters = ReportParametersSerializer(required=False)

    def validate_study(self, study: Study) -> Study:
        if not study.capabilities.answers_are_word_marks:
            raise serializers.ValidationError(
                f"{study.slug} is a listening form; agreement reports are of emphasis studies"
            )
        return study


class ReportSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:agreement-report-detail")

    class Meta:
        model = AgreementReport
        fields = ["id", "url", "study", "language", "parameters", *JOB_FIELDS]


class ReportResultSerializer(ReportSerializer):
    result = serializers.SerializerMethodField(
        help_text="The report (format emphasis-agreement-report/1) once succeeded."
    )

    class Meta(ReportSerializer.Meta):
        fields = [*ReportSerializer.Meta.fields, "result"]

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_result(self, report) -> dict | None:
        if report.status != AgreementReport.Status.SUCCEEDED:
            return None
        return json.loads(report.result_json)


class ClipPageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Clips in the drill-down.")
    ordering = serializers.CharField()
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    results = serializers.ListField(
        child=serializers.DictField(), help_text="One row per clip: the report's drilldown.clips columns."
    )


class ClipMarksSerializer(serializers.Serializer):
    clip = serializers.CharField(help_text="The clip's external id.")
    words = serializers.ListField(child=serializers.CharField())
    agreement = serializers.DictField(allow_null=True, help_text="The clip's drill-down row; null if not used.")
    annotations = serializers.ListField(
        child=serializers.DictField(),
        help_text="annotator (opaque id), levels (0, 1, 2 per word), mismatch_reported, seconds; participant "
        "(Prolific id) only for holders of annotation.change_participant.",
    )


class DrilldownMixin:
    """The drill-down of a succeeded report (409 before, as its downloads answer)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("ordering", str, description="A column, '-' first for descending: " + ", ".join(SORTABLE)),
            OpenApiParameter("offset", int),
            OpenApiParameter("limit", int, description="At most 1000; default 100."),
        ],
        responses={200: ClipPageSerializer},
        operation_id="agreement_reports_clips_list",
    )
    @action(detail=True, methods=["get"])
    def clips(self, request, pk: int):
        section = _drilldown(self.get_object())
        ordering = request.query_params.get("ordering", "agreement")
        offset, limit = _bounded(request, "offset", 0, 0, None), _bounded(request, "limit", 100, 1, 1000)
        try:
            rows = clip_rows(section, order_by=ordering)
        except ValueError as error:
            raise ValidationError({"ordering": [str(error)]}) from None
        body = {"count": len(rows), "ordering": ordering, "offset": offset, "limit": limit}
        return Response(body | {"results": rows[offset : offset + limit]})

    @extend_schema(responses={200: ClipMarksSerializer}, operation_id="agreement_reports_clip_marks")
    @action(detail=True, methods=["get"], url_path="clips/<str:clip>")
    def clip(self, request, pk: int, clip: str):
        report = self.get_object()
        section = _drilldown(report)
        marks = clip_marks(study=report.study, external_id=clip, named=sees_prolific_ids(request.user))
        if marks is None:
            raise Http404(f"{report.study.slug} has no clip {clip!r}")
        row = next((row for row in clip_rows(section) if row["clip"] == clip), None)
        return Response({"clip": clip, "words": marks.words, "agreement": row, "annotations": marks.annotations})


def _drilldown(report: AgreementReport) -> dict:
    if report.status != AgreementReport.Status.SUCCEEDED:
        raise NotReady(report, what=f"Agreement report {report.pk}")
    section = json.loads(report.result_json).get("drilldown")
    if section is None:
        raise ValidationError(
            f"agreement report {report.pk} was computed before reports had a drill-down; ask for a new one"
        )
    return section


def _bounded(request, name: str, default: int, low: int, high: int | None) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValidationError({name: [f"must be a whole number, not {text!r}"]}) from None
    if value < low or (high is not None and value > high):
        raise ValidationError({name: [f"must be between {low} and {high}" if high else f"must be at least {low}"]})
    return value


class AgreementReportViewSet(DrilldownMixin, mixins.ListModelMixin, JobRetrieveMixin, ApiViewSet):
    queryset = AgreementReport.objects.order_by("-created_at", "-pk")
    serializer_class = ReportSerializer
    filterset_fields = ["study", "status", "language"]

    def get_serializer_class(self):
        return ReportResultSerializer if self.action == "retrieve" else ReportSerializer

    @extend_schema(request=ReportRequestSerializer, responses={202: ReportSerializer})
    def create(self, request):
        given = ReportRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        study = given.validated_data["study"]
        parameters = _parameters(study, given.validated_data.get("parameters", {}))
        report = agreement_report_request(study=study, parameters=parameters, user=request.user)
        body = ReportSerializer(report, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": str(body["url"])})


def _parameters(study: Study, given: dict):
    language = given.get("language") or None
    languages = study_languages(study=study)
    if language is not None and language not in languages:
        named = ", ".join(code for code in languages if code) or "none"
        raise ValidationError({"parameters": {"language": [f"not a language of {study.slug} (it has: {named})"]}})
    thresholds = thresholds_with(study_thresholds(study=study), given.get("thresholds"))
    try:
        return report_parameters(study=study, **{**given, "language": language, "thresholds": thresholds})
    except ValueError as error:
        raise ValidationError({"parameters": [str(error)]}) from None
