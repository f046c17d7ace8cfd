"""The study designer: POST /study-designs/ (evaluation.view_agreementreport, as the report: it
reads the study's annotations) answers 200 with the designs of 3 to 15 annotators a clip, fixed,
with exact stopping and with probabilistic stopping (at the `probabilistic` epsilon and minimum),
and a recommendation (evaluation.services.study_designs). Nothing is stored; the default
replicates answer in seconds. With source "pilot" and `check_allocation` (which needs
annotation.change_study too), it also runs the design check of model allocation and the ordinal
predictor against the fixed design at the study's settings and stores it on the study
(evaluation.services.design_checks; under a minute); every answer carries the study's stored
check as `design_check`, which says whether either design may be chosen, and why not."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response

from annotation.models import Study
from annotation.shared.api.base import ApiViewSet
from evaluation.services.design_checks import study_design_check_from_pilot
from evaluation.services.study_designs import DEFAULT_REPLICATES, SOURCES, DesignRefused, study_design_compute
from evaluation.stats.study_designer import ProbabilisticStopping

PROBABILISTIC = ProbabilisticStopping()


class DesignAssumptionsSerializer(serializers.Serializer):
    """Fields of evaluation.stats.study_designer.DesignAssumptions; with source "pilot", those given
    replace what the pilot gives."""

    emphasis_rate = serializers.FloatField(required=False, min_value=0, max_value=1)
    accuracy = serializers.FloatField(required=False, min_value=0.5, max_value=1)
    spammers = serializers.FloatField(required=False, min_value=0, max_value=1)
    heterogeneity = serializers.FloatField(required=False, min_value=0, max_value=1)
    heavy_share = serializers.FloatField(required=False, min_value=0, max_value=1)
    seconds_per_audio_second = serializers.FloatField(required=False, min_value=0.1)
    hourly_rate = serializers.FloatField(required=False, min_value=0)


class DesignTargetsSerializer(serializers.Serializer):
    kappa_width = serializers.FloatField(required=False, min_value=0, help_text="Widest 95 % interval of kappa.")
    flip_share = serializers.FloatField(
        required=False, min_value=0, max_value=1, help_text="Most labels that one more listener may flip."
    )


class DesignProbabilisticSerializer(serializers.Serializer):
    """The probabilistic designs' rule, with a study's bounds (annotation.models.Study)."""

    epsilon = serializers.FloatField(
        required=False,
        min_value=0.0001,
        max_value=0.5,
        help_text=f"Stop a clip when every word's chance of another label is below this; default {PROBABILISTIC.epsilon}.",
    )
    minimum = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text=f"Fewest annotations a clip gets before it may stop; default {PROBABILISTIC.minimum}.",
    )


class DesignRequestSerializer(serializers.Serializer):
    study = serializers.PrimaryKeyRelatedField(queryset=Study.objects.all(), help_text="An emphasis study.")
    source = serializers.ChoiceField(choices=SOURCES, default="assumptions")
    assumptions = DesignAssumptionsSerializer(required=False)
    targets = DesignTargetsSerializer(required=False)
    probabilistic = DesignProbabilisticSerializer(required=False)
    replicates = serializers.IntegerField(default=DEFAULT_REPLICATES, min_value=2, max_value=200)
    seed = serializers.IntegerField(default=0, min_value=0, max_value=2**32 - 1)
    check_allocation = serializers.BooleanField(
        default=False,
        help_text='Source "pilot": also check model allocation and the ordinal predictor against the fixed design '
        "at the study's settings and store the verdicts on the study (needs annotation.change_study; under a minute).",
    )

    def validate(self, attrs):
        if attrs["check_allocation"] and attrs["source"] != "pilot":
            raise serializers.ValidationError(
                {"check_allocation": ['The design check runs from a pilot: source "pilot".']}
            )
        return attrs


class StudyDesignViewSet(ApiViewSet):
    queryset = Study.objects.none()
    required_perms = ("evaluation.view_agreementreport",)

    @extend_schema(
        request=DesignRequestSerializer,
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="assumptions, targets, rows (one a design), recommendation, design_check (the study's stored "
                "check of model allocation and the ordinal predictor; empty before one)",
            )
        },
    )
    def create(self, request):
        given = DesignRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        values = given.validated_data
        if values["check_allocation"] and not request.user.has_perm("annotation.change_study"):
            raise PermissionDenied("The design check is stored on the study: it needs annotation.change_study.")
        try:
            design = study_design_compute(
                study=values["study"],
                source=values["source"],
                assumptions=values.get("assumptions"),
                targets=values.get("targets"),
                probabilistic=values.get("probabilistic"),
                replicates=values["replicates"],
                seed=values["seed"],
            )
            if values["check_allocation"]:
                # At the study's own settings and the service's seed, whatever this request overrides.
                study_design_check_from_pilot(study=values["study"])
        except DesignRefused as refused:
            raise ValidationError({"study": [str(refused)]}) from None
        return Response({**design.as_dict(), "design_check": values["study"].design_check})
