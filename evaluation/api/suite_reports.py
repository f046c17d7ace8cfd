"""Suite reports: POST /suite-reports/ (evaluation.add_suitereport, and the subject's view
permission: annotation.view_study or evaluation.view_castset) asks for the scores of a
benchmark suite (StressTest or StanceBench of a listening-form study, CAST of a CAST set) and
answers 202 with the report to poll; GET /suite-reports/{id}/ (evaluation.view_suitereport and
the subject's view permission) shows its progress and, once succeeded, its result: the same JSON as the suite page's download.
A report already computed from the same inputs and parameters is returned as it is
(evaluation.services.suite_reports.suite_report_request)."""

import json

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status
from rest_framework.response import Response

from annotation.models import Study
from annotation.shared.access import require_perm
from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.jobs import JOB_FIELDS, JobRetrieveMixin
from evaluation.models import CastSet, SuiteReport
from evaluation.services.suite_reports import MAX_RESAMPLES, SuiteRefused, suite_report_request


class SuiteRequestSerializer(serializers.Serializer):
    suite = serializers.ChoiceField(choices=SuiteReport.Suite.choices)
    study = serializers.PrimaryKeyRelatedField(
        queryset=Study.objects.all(),
        required=False,
        allow_null=True,
        help_text="StressTest, StanceBench: a listening form.",
    )
    cast_set = serializers.PrimaryKeyRelatedField(
        queryset=CastSet.objects.all(), required=False, allow_null=True, help_text="CAST: the item set."
    )
    resamples = serializers.IntegerField(required=False, min_value=1, max_value=MAX_RESAMPLES, default=1000)
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**32 - 1, default=0)

    def validate(self, data):
        # The service's checks, as a 400 naming the field, before anything is queued.
        needed, unwanted = ("cast_set", "study") if data["suite"] == SuiteReport.Suite.CAST else ("study", "cast_set")
        if data.get(needed) is None:
            raise serializers.ValidationError({needed: [f"a {data['suite']} report needs one"]})
        if data.get(unwanted) is not None:
            raise serializers.ValidationError({unwanted: [f"not used by a {data['suite']} report"]})
        if needed == "study" and not data["study"].capabilities.answers_are_choices:
            raise serializers.ValidationError({"study": [f"{data['study'].slug} is not a listening-form study"]})
        return data


class SuiteReportSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:suite-report-detail")

    class Meta:
        model = SuiteReport
        fields = ["id", "url", "suite", "study", "cast_set", "resamples", "seed", *JOB_FIELDS]


class SuiteReportResultSerializer(SuiteReportSerializer):
    result = serializers.SerializerMethodField(help_text="The suite's scores once succeeded.")

    class Meta(SuiteReportSerializer.Meta):
        fields = [*SuiteReportSerializer.Meta.fields, "result"]

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_result(self, report) -> dict | None:
        if report.status != SuiteReport.Status.SUCCEEDED:
            return None
        return json.loads(report.result_json)


class SuiteReportViewSet(mixins.ListModelMixin, JobRetrieveMixin, ApiViewSet):
    queryset = SuiteReport.objects.order_by("-created_at", "-pk")
    serializer_class = SuiteReportSerializer
    filterset_fields = ["suite", "study", "cast_set", "status"]

    def get_serializer_class(self):
        return SuiteReportResultSerializer if self.action == "retrieve" else SuiteReportSerializer

    def retrieve(self, request, *args, **kwargs):
        # The result holds gold answers and every system's outputs: the subject's own permission too.
        require_perm(request, _subject_perm(self.get_object().suite))
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(request=SuiteRequestSerializer, responses={202: SuiteReportSerializer})
    def create(self, request):
        given = SuiteRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        require_perm(request, _subject_perm(given.validated_data["suite"]))
        try:
            report = suite_report_request(**given.validated_data, user=request.user)
        except SuiteRefused as error:
            raise serializers.ValidationError({"suite": [str(error)]}) from None
        body = SuiteReportSerializer(report, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": str(body["url"])})


def _subject_perm(suite: str) -> str:
    """What the suite's page needs: to view the study (StressTest, StanceBench) or the CAST set."""
    return "evaluation.view_castset" if suite == SuiteReport.Suite.CAST else "annotation.view_study"
