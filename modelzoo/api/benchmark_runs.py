"""Benchmark runs (the model zoo), through modelzoo.services.benchmark_runs:

- POST /benchmark-runs/ (modelzoo.add_benchmarkrun and evaluation.view_labelset): one run per
  model the setting needs, queued for a GPU worker; 202 with the runs and their shared group;
- GET /benchmark-runs/ (?group=, ?status=, ...), /benchmark-runs/{id}/ (modelzoo.view_benchmarkrun):
  poll a run: status, phase, progress, its log;
- POST /benchmark-runs/{id}/cancel/ (modelzoo.change_benchmarkrun);
- GET /benchmark-runs/{id}/metrics-csv/ (modelzoo.view_benchmarkrun): the metrics as CSV;
- GET /benchmark-runs/{id}/results/ (modelzoo.view_benchmarkrun): metrics with intervals, training
  history, hyperparameters, the set's human agreement, and short-lived links to the predictions CSV
  and the checkpoint zip, which need no credentials (presigned on S3).
"""

from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.refusals import Refused
from annotation.shared.access import require_perm
from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.errors import REFUSED, NotReady
from annotation.shared.api.jobs import JOB_FIELDS, JobRetrieveMixin
from annotation.shared.downloads import attachment, job_download
from evaluation.models import LabelSet
from modelzoo.models import BenchmarkRun
from modelzoo.plans import Plan
from modelzoo.results import results_csv
from modelzoo.selectors.benchmark_runs import run_results, run_summary
from modelzoo.services.benchmark_runs import (
    FILES,
    LINK_TTL_SECONDS,
    BenchmarkRefused,
    benchmark_file_link,
    benchmark_run_cancel,
    benchmark_runs_launch,
)


class BenchmarkSettingSerializer(serializers.Serializer):
    """Field names are those of modelzoo.plans.Plan (and modelzoo.training.experiments.Setting)."""

    kind = serializers.ChoiceField(choices=BenchmarkRun.Kind.choices)
    languages = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Monolingual and cross-lingual: one model per language. Default: every language with train, "
        "validation and test clips.",
    )
    language = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="Data-scale and cross-dataset: train on this language only; elsewhere the same as one language.",
    )
    test_language = serializers.CharField(required=False, allow_blank=True, help_text="Cross-dataset only.")
    by = serializers.ChoiceField(choices=["language", "variety"], required=False)
    with_diagonal = serializers.BooleanField(
        required=False, help_text="Cross-lingual: also one monolingual model per language. Default: true."
    )
    train_arousal = serializers.ChoiceField(choices=BenchmarkRun.Arousal.choices, required=False)
    test_arousal = serializers.ChoiceField(
        choices=BenchmarkRun.Arousal.choices, required=False, help_text="Cross-arousal; without both, both directions."
    )
    percents = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=100),
        required=False,
        help_text="Data-scale: one model per percentage. Default: the set's nested steps.",
    )


class BenchmarkLaunchSerializer(serializers.Serializer):
    label_set = serializers.PrimaryKeyRelatedField(queryset=LabelSet.objects.all(), help_text="A final label set.")
    test_label_set = serializers.PrimaryKeyRelatedField(
        queryset=LabelSet.objects.all(), required=False, allow_null=True, help_text="Cross-dataset: the set to test on."
    )
    detector = serializers.ChoiceField(choices=BenchmarkRun.Detector.choices)
    backbone = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Blank: the detector's default."
    )
    label_mode = serializers.ChoiceField(choices=BenchmarkRun.LabelMode.choices)
    setting = BenchmarkSettingSerializer()
    config = serializers.DictField(
        required=False, default=dict, help_text="Hyperparameter overrides (modelzoo/training/config.py)."
    )
    resamples = serializers.IntegerField(required=False, default=1000, min_value=0, max_value=20_000)
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=2**31 - 1)
    devices = serializers.IntegerField(
        required=False,
        default=1,
        min_value=1,
        max_value=64,
        help_text="GPUs of one worker's machine each run trains on (data parallel); the batch size is per device.",
    )


class BenchmarkRunSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:benchmark-run-detail")
    results_url = serializers.HyperlinkedIdentityField(
        view_name="api:benchmark-run-results", help_text="The results, once succeeded."
    )
    cancelled = serializers.BooleanField(read_only=True, help_text='Failed with error "cancelled".')

    class Meta:
        model = BenchmarkRun
        fields = [
            "id",
            "url",
            "results_url",
            "group",
            "label_set",
            "test_label_set",
            "detector",
            "backbone",
            "label_mode",
            "setting_kind",
            "setting",
            "setting_label",
            "config_overrides",
            "resamples",
            "seed",
            "devices",
            "cancel_requested",
            "cancelled",
            "attempts",
            "log",
            "metrics",
            *JOB_FIELDS,
        ]


class BenchmarkLaunchedSerializer(serializers.Serializer):
    group = serializers.UUIDField(help_text="Shared by the runs launched together; filter the list with ?group=.")
    runs = BenchmarkRunSerializer(many=True)


class LabelProvenanceSerializer(serializers.Serializer):
    label_set = serializers.CharField()
    label_source = serializers.ChoiceField(choices=LabelSet.LabelSource.choices)
    label_kind = serializers.ChoiceField(choices=LabelSet.LabelKind.choices)
    dataset = serializers.CharField(help_text="The published dataset it was imported from; empty for studies run here.")
    provenance = serializers.CharField(help_text="The same, in words.")


class BenchmarkResultsSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    group = serializers.UUIDField()
    label_set = serializers.CharField()
    test_label_set = serializers.CharField(allow_null=True)
    detector = serializers.CharField()
    label_mode = serializers.CharField()
    measures = serializers.ListField(child=serializers.CharField(), help_text="The label mode's measures.")
    setting = serializers.DictField()
    setting_label = serializers.CharField()
    metrics = serializers.DictField(
        help_text='{"pooled": ..., "by_language": {...}}: clips, words, emphasized (by the labels), marked (by '
        'the detector), and accuracy, f1, pearson as {"value", "low", "high"} (clip-bootstrap 95 % interval; '
        'none from fewer than 5 clips, with "interval_undefined": the reason).'
    )
    details = serializers.DictField(help_text="Hyperparameters used, backbone, clips per split, history, seconds.")
    human_agreement = serializers.ListField(child=serializers.DictField())
    trained_on = LabelProvenanceSerializer()
    tested_against = LabelProvenanceSerializer(help_text="The second set for cross-dataset runs, else the set itself.")
    predictions_url = serializers.URLField(help_text="Per-word test predictions (CSV); no credentials needed.")
    checkpoint_url = serializers.URLField(help_text="The trained detector, zipped; no credentials needed.")
    expires_in = serializers.IntegerField(help_text="Seconds the two links stay valid.")


class BenchmarkRunViewSet(mixins.ListModelMixin, JobRetrieveMixin, ApiViewSet):
    queryset = BenchmarkRun.objects.order_by("-created_at", "-pk")
    serializer_class = BenchmarkRunSerializer
    filterset_fields = ["group", "status", "detector", "label_mode", "setting_kind", "label_set"]

    @extend_schema(request=BenchmarkLaunchSerializer, responses={202: BenchmarkLaunchedSerializer})
    def create(self, request):
        given = BenchmarkLaunchSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        require_perm(request, "evaluation.view_labelset")  # a run reads the set it trains on
        data = given.validated_data
        try:
            runs = benchmark_runs_launch(
                label_set=data["label_set"],
                test_label_set=data.get("test_label_set"),
                detector=data["detector"],
                label_mode=data["label_mode"],
                plan=Plan.from_dict(data["setting"]),
                backbone=data["backbone"],
                config=data["config"],
                resamples=data["resamples"],
                seed=data["seed"],
                devices=data["devices"],
                user=request.user,
            )
        except (BenchmarkRefused, ValueError) as refusal:
            raise Refused(str(refusal)) from None
        for run in runs:
            run.refresh_from_db()  # a worker in this process (eager tasks) may have run it already
        group = runs[0].group
        listing = request.build_absolute_uri(f"{reverse('api:benchmark-run-list')}?group={group}")
        body = {"group": group, "runs": self.get_serializer(runs, many=True).data}
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": listing})

    @extend_schema(request=None, responses={200: BenchmarkRunSerializer, 400: REFUSED})
    @action(detail=True, methods=["post"], required_perms=("modelzoo.change_benchmarkrun",))
    def cancel(self, request, pk: int):
        """Ask the run to stop: it ends failed, "cancelled" (at once when no worker holds it)."""
        run = benchmark_run_cancel(run=self.get_object())
        return Response(self.get_serializer(run).data)

    @extend_schema(responses={200: BenchmarkResultsSerializer})
    @action(detail=True, methods=["get"], required_perms=("modelzoo.view_benchmarkrun",))
    def results(self, request, pk: int):
        """What a succeeded run found; 409 until it has (with Retry-After while it is queued or
        running), as every download answers."""
        run = self.get_object()
        if run.status != BenchmarkRun.Status.SUCCEEDED:
            raise NotReady(run, what=f"Run {run.pk}'s results" + (" (cancelled)" if run.cancelled else ""))
        links = {f"{kind}_url": request.build_absolute_uri(benchmark_file_link(run=run, kind=kind)) for kind in FILES}
        return Response({**run_results(run), **links, "expires_in": LINK_TTL_SECONDS})

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"], url_path="metrics-csv", required_perms=("modelzoo.view_benchmarkrun",))
    def results_csv(self, request, pk: int):
        """The metrics as CSV (one row per scope and measure, with the interval), as the admin's download;
        409 with Retry-After until the run has succeeded."""
        run = self.get_object()
        page = request.build_absolute_uri(reverse("api:benchmark-run-detail", args=[run.pk]))
        return job_download(run, page=page, what=f"Run {run.pk}'s metrics", serve=_metrics_csv)


def _metrics_csv(run: BenchmarkRun) -> HttpResponse:
    body = results_csv([run_summary(run)])
    return attachment(body, filename=f"benchmark-run-{run.pk}.csv", content_type="text/csv; charset=utf-8")
