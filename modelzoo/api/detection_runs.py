"""Detection runs (the model zoo), through modelzoo.services.detection_runs:

- POST /detection-runs/ (modelzoo.add_detectionrun and modelzoo.view_benchmarkrun, with
  annotation.view_study or evaluation.view_castset for the target): a succeeded benchmark run's
  detector over a listening form's stressed_words items (`study`) or a CAST set's renditions
  (`cast_set`), queued for a GPU worker; 202 with the run;
- GET /detection-runs/ (?status=, ?source_run=, ?study=, ?cast_set=), /detection-runs/{id}/
  (modelzoo.view_detectionrun): poll a run; once succeeded, `system` names the benchmark system
  whose outputs are its predictions.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.response import Response

from annotation.models import Study
from annotation.shared.access import require_perm
from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.jobs import JOB_FIELDS, JobRetrieveMixin
from evaluation.models import CastSet
from modelzoo.models import BenchmarkRun, DetectionRun
from modelzoo.services.detection_runs import detection_run_create


class DetectionLaunchSerializer(serializers.Serializer):
    source_run = serializers.PrimaryKeyRelatedField(
        queryset=BenchmarkRun.objects.all(), help_text="A succeeded benchmark run: its detector."
    )
    study = serializers.PrimaryKeyRelatedField(
        queryset=Study.objects.all(),
        required=False,
        allow_null=True,
        help_text="A listening form: its stressed_words items. Give this or cast_set.",
    )
    cast_set = serializers.PrimaryKeyRelatedField(
        queryset=CastSet.objects.all(), required=False, allow_null=True, help_text="A CAST set: its renditions."
    )
    language = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=35, help_text="The language of clips that have none."
    )


class DetectionRunSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:detection-run-detail")
    system = serializers.SlugRelatedField(
        slug_field="name", read_only=True, help_text="The benchmark system holding the predictions, once succeeded."
    )

    class Meta:
        model = DetectionRun
        fields = [
            "id",
            "url",
            "source_run",
            "study",
            "cast_set",
            "language",
            "system",
            "outputs_count",
            "clips_count",
            "words_count",
            "stressed_count",
            "attempts",
            *JOB_FIELDS,
        ]


class DetectionRunViewSet(mixins.ListModelMixin, JobRetrieveMixin, ApiViewSet):
    queryset = DetectionRun.objects.select_related("system").order_by("-created_at", "-pk")
    serializer_class = DetectionRunSerializer
    filterset_fields = ["status", "source_run", "study", "cast_set"]

    @extend_schema(request=DetectionLaunchSerializer, responses={202: DetectionRunSerializer})
    def create(self, request):
        given = DetectionLaunchSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        require_perm(request, "modelzoo.view_benchmarkrun")  # the run loads the detector a benchmark trained
        if data.get("study") is not None:
            require_perm(request, "annotation.view_study")
        if data.get("cast_set") is not None:
            require_perm(request, "evaluation.view_castset")
        run = detection_run_create(
            source_run=data["source_run"],
            study=data.get("study"),
            cast_set=data.get("cast_set"),
            language=data["language"],
            user=request.user,
        )
        run.refresh_from_db()  # a worker in this process (eager tasks) may have run it already
        body = self.get_serializer(run).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})
