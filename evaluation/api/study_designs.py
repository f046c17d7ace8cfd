"""The study designer: POST /study-designs/ (evaluation.view_agreementreport, as the report: it
reads the study's annotations) answers 200 with the designs of 3 to 15 annotators a clip, fixed
and with exact stopping, and a recommendation (evaluation.services.study_designs). Nothing is
stored; the default replicates answer in seconds."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.api.base import ApiViewSet
from annotation.models import Study
from evaluation.services.study_designs import DEFAULT_REPLICATES, SOURCES, DesignRefused, study_design_compute


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


class DesignRequestSerializer(serializers.Serializer):
    study = serializers.PrimaryKeyRelatedField(queryset=Study.objects.all(), help_text="An emphasis study.")
    source = serializers.ChoiceField(choices=SOURCES, default="assumptions")
    assumptions = DesignAssumptionsSerializer(required=False)
    targets = DesignTargetsSerializer(required=False)
    replicates = serializers.IntegerField(default=DEFAULT_REPLICATES, min_value=2, max_value=200)
    seed = serializers.IntegerField(default=0, min_value=0, max_value=2**32 - 1)


class StudyDesignViewSet(ApiViewSet):
    queryset = Study.objects.none()
    required_perms = ("evaluation.view_agreementreport",)

    @extend_schema(
        request=DesignRequestSerializer,
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT, description="assumptions, targets, rows (one a design), recommendation"
            )
        },
    )
    def create(self, request):
        given = DesignRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        values = given.validated_data
        try:
            design = study_design_compute(
                study=values["study"],
                source=values["source"],
                assumptions=values.get("assumptions"),
                targets=values.get("targets"),
                replicates=values["replicates"],
                seed=values["seed"],
            )
        except DesignRefused as refused:
            raise ValidationError({"study": [str(refused)]}) from None
        return Response(design.as_dict())
