"""Label sets, through evaluation.services.label_sets:

- GET /label-sets/, /label-sets/{id}/ (evaluation.view_labelset): state, build progress, summary;
- POST /label-sets/ (evaluation.add_labelset): a new draft version, built by a worker; 202;
- POST /label-sets/{id}/finalize/ and /archive/ (evaluation.change_labelset);
- DELETE /label-sets/{id}/ (evaluation.delete_labelset): drafts only;
- GET /label-sets/{label_set_pk}/rows/ (evaluation.view_labelset): its clips, in label_set_rows.py.
A refusal (not built yet, already final, ...) is 400 with the service's reason.
"""

import django_filters
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.models import Study
from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.errors import REFUSED
from annotation.shared.api.jobs import JOB_FIELDS, JobRetrieveMixin
from evaluation.api.thresholds import ThresholdsSerializer, thresholds_with
from evaluation.models import LabelSet
from evaluation.services.label_sets import (
    label_set_archive,
    label_set_create,
    label_set_default_parameters,
    label_set_delete,
    label_set_finalize,
)
from evaluation.stats.annotator_models import MODELS

CHANGE = ("evaluation.change_labelset",)


class LabelSetParametersSerializer(serializers.Serializer):
    """Field names are those of LabelSetParameters; the bounds are the admin form's."""

    subsample = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=1000,
        help_text="Annotations per clip, as the agreement report; null uses all. Default: null, every usable "
        "annotation.",
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**32 - 1, help_text="The subsample's.")
    split_seed = serializers.IntegerField(required=False, min_value=0, max_value=2**32 - 1)
    proportions = serializers.ListField(
        child=serializers.FloatField(min_value=0, max_value=1),
        min_length=3,
        max_length=3,
        required=False,
        help_text="Train, validation and test shares, adding up to 1.",
    )
    split_by_speaker = serializers.BooleanField(required=False, help_text="Keep each speaker in one split.")
    exclude_flagged = serializers.BooleanField(required=False, help_text="Leave out flagged annotators.")
    exclude_failed_checks = serializers.BooleanField(
        required=False, help_text="Leave out annotators who failed an attention check."
    )
    thresholds = ThresholdsSerializer(required=False, help_text="Default: the first study's review thresholds.")
    scale_steps = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=100),
        min_length=1,
        required=False,
        help_text="Data-scale percentages of the training split.",
    )
    arousal = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text='Emotions per arousal, {"high": [...], "low": [...]}. Default: MMEE\'s.',
    )
    resamples = serializers.IntegerField(
        required=False, min_value=0, max_value=20_000, help_text="Bootstrap resamples of the agreement summary."
    )
    annotator_model = serializers.ChoiceField(
        choices=["", *MODELS],
        required=False,
        help_text="Model-based labels beside the majority's: each word's posterior and each annotator's reliability "
        "with its SE. Empty (the default): off.",
    )
    model_resamples = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=1000,
        help_text="Bootstrap resamples over clips for the reliabilities' SE.",
    )


class LabelSetCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, help_text="An existing name makes its next version.")
    studies = serializers.PrimaryKeyRelatedField(
        queryset=Study.objects.all(),
        many=True,
        allow_empty=False,
        help_text="Emphasis studies; parameters not given are the first one's.",
    )
    parameters = LabelSetParametersSerializer(required=False)


# The API's `state` is the model's `lifecycle` (draft, final, archived): renamed in the code so it
# cannot be taken for `status`, its build job's, and kept here so existing clients keep working.
STATE_HELP = "draft, final or archived (the set's lifecycle; `status` is its build job's)."


class LabelSetFilter(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(
        field_name="lifecycle", choices=LabelSet.Lifecycle.choices, help_text=STATE_HELP
    )

    class Meta:
        model = LabelSet
        fields = ["name", "status", "studies", "label_source", "label_kind"]


class LabelSetSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:label-set-detail")
    state = serializers.ChoiceField(
        source="lifecycle", choices=LabelSet.Lifecycle.choices, read_only=True, help_text=STATE_HELP
    )
    rows_url = serializers.SerializerMethodField()

    class Meta:
        model = LabelSet
        fields = [
            "id",
            "url",
            "rows_url",
            "name",
            "version",
            "studies",
            "state",
            "label_source",
            "label_kind",
            "source",
            "parameters",
            "summary",
            "checksum",
            "code_version",
            "finalized_at",
            *JOB_FIELDS,
        ]

    def get_rows_url(self, label_set) -> str:
        return self.context["request"].build_absolute_uri(reverse("api:label-set-row-list", args=[label_set.pk]))


class LabelSetViewSet(mixins.ListModelMixin, JobRetrieveMixin, mixins.DestroyModelMixin, ApiViewSet):
    queryset = LabelSet.objects.prefetch_related("studies").order_by("name", "-version")
    serializer_class = LabelSetSerializer
    filterset_class = LabelSetFilter

    @extend_schema(request=LabelSetCreateSerializer, responses={202: LabelSetSerializer})
    def create(self, request):
        given = LabelSetCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        studies = list(dict.fromkeys(given.validated_data["studies"]))  # in order, each once
        parameters = _parameters(studies, given.validated_data.get("parameters", {}))
        label_set = label_set_create(
            name=given.validated_data["name"], studies=studies, parameters=parameters, user=request.user
        )
        label_set.refresh_from_db()  # a worker in this process (eager tasks) may have built it already
        body = self.get_serializer(label_set).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": str(body["url"])})

    @extend_schema(request=None, responses={200: LabelSetSerializer, 400: REFUSED})
    @action(detail=True, methods=["post"], required_perms=CHANGE)
    def finalize(self, request, pk: int):
        """Freeze a built draft for good: its rows, their checksum and the code version."""
        return self._act(lambda label_set: label_set_finalize(label_set=label_set, user=request.user))

    @extend_schema(request=None, responses={200: LabelSetSerializer, 400: REFUSED})
    @action(detail=True, methods=["post"], required_perms=CHANGE)
    def archive(self, request, pk: int):
        """Archive a final set: it stays, for the results and exports made from it."""
        return self._act(lambda label_set: label_set_archive(label_set=label_set))

    def perform_destroy(self, instance):
        label_set_delete(label_set=instance)

    def _act(self, service):
        label_set = service(self.get_object())
        return Response(self.get_serializer(label_set).data)


def _parameters(studies: list[Study], given: dict):
    overrides = {**given}
    for name in ("proportions", "scale_steps"):
        if name in overrides:
            overrides[name] = tuple(overrides[name])
    try:
        defaults = label_set_default_parameters(studies=studies)
        overrides["thresholds"] = thresholds_with(defaults.thresholds, given.get("thresholds"))
        return label_set_default_parameters(studies=studies, **overrides)
    except ValueError as error:
        raise ValidationError({"parameters": [str(error)]}) from None
