"""Agreement reports: POST /agreement-reports/ (evaluation.add_agreementreport) asks for one, with
the study's defaults for every parameter not given, and answers 202 with the report to poll;
GET /agreement-reports/{id}/ (evaluation.view_agreementreport) shows its progress and, once
succeeded, its result. A report already computed for the same parameters and annotations is
returned as it is (evaluation.services.agreement_reports.agreement_report_request)."""

import json

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.api.base import ApiViewSet
from annotation.api.jobs import JOB_FIELDS, JobRetrieveMixin
from annotation.models import Study
from annotation.selectors.study_data import study_languages
from evaluation.api.thresholds import ThresholdsSerializer, thresholds_with
from evaluation.models import AgreementReport
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
        "Default: the study's target annotations.",
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
        if study.kind != Study.Kind.EMPHASIS:
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


class AgreementReportViewSet(mixins.ListModelMixin, JobRetrieveMixin, ApiViewSet):
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
    thresholds = thresholds_with(report_parameters(study=study).thresholds, given.get("thresholds"))
    try:
        return report_parameters(study=study, **{**given, "language": language, "thresholds": thresholds})
    except ValueError as error:
        raise ValidationError({"parameters": [str(error)]}) from None
