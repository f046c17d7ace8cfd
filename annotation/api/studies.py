"""Studies with their progress: GET /studies/ and /studies/{id}/ (annotation.view_study), and
POST /studies/{id}/status/ (annotation.change_study), through the service the admin's actions use.
Creating and configuring studies: annotation.api.study_writes."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.api.study_writes import StudyWritesMixin
from annotation.models import Study
from annotation.selectors.study_progress import studies_with_progress
from annotation.services.adaptive_model import adaptive_model_summary
from annotation.services.studies import study_status_set
from annotation.shared.api.base import ApiViewSet


class DecisionCountsSerializer(serializers.Serializer):
    pending = serializers.IntegerField(source="decision_pending")
    approved = serializers.IntegerField(source="decision_approved")
    rejected = serializers.IntegerField(source="decision_rejected")
    return_requested = serializers.IntegerField(source="decision_return_requested")


class ParticipantCountsSerializer(serializers.Serializer):
    total = serializers.IntegerField(source="participants_total")
    completed = serializers.IntegerField(source="participants_completed")
    screened_out = serializers.IntegerField(source="participants_screened_out")
    in_progress = serializers.IntegerField(source="participants_in_progress")
    decisions = DecisionCountsSerializer(source="*", help_text="The researcher's review decisions.")


class StudyProgressSerializer(serializers.Serializer):
    clips = serializers.IntegerField(source="clip_count")
    clips_to_review = serializers.IntegerField(help_text="Clips out of assignment, awaiting mismatch review.")
    annotations_done = serializers.IntegerField(help_text="Annotations submitted for the study's clips.")
    annotations_target = serializers.IntegerField(help_text="Clips times the target annotations per clip.")
    participants = ParticipantCountsSerializer(source="*")


class StudyAdaptiveSerializer(serializers.Serializer):
    """The study's adaptive design (researcher's guide, "Adaptive designs"): set in the admin or
    by PATCH /studies/{id}/ (model allocation and the ordinal predictor only where the study's design
    check says they beat the fixed design); `design_check` is that check."""

    mode = serializers.ChoiceField(source="adaptive_mode", choices=Study.Adaptive.choices)
    epsilon = serializers.FloatField(source="adaptive_epsilon")
    minimum_annotators = serializers.IntegerField(source="adaptive_min_annotators")
    maximum_per_clip = serializers.IntegerField(source="adaptive_max_per_clip")
    scalar_se_bound = serializers.FloatField(source="adaptive_scalar_se", allow_null=True)
    prior = serializers.JSONField(
        source="adaptive_prior", help_text="The fitted beta prior: a, b, words, fitted_at; empty before the first fit."
    )
    predictor = serializers.ChoiceField(source="adaptive_predictor", choices=Study.Predictor.choices)
    model = serializers.SerializerMethodField(
        help_text="The fitted ordinal model (predictor ordinal): annotations, participants, fitted_at; "
        "empty before the first fit."
    )
    design_check = serializers.JSONField(
        help_text="The study designer's check, from the study's pilot, of model allocation (allocate) and the "
        "ordinal predictor (ordinal) against the fixed design: settings, and per design verdict, beats_fixed, "
        "figures and reason; empty before a check (POST /study-designs/ with check_allocation)."
    )

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_model(self, study: Study) -> dict:
        return adaptive_model_summary(study)


class StudySerializer(serializers.ModelSerializer):
    progress = StudyProgressSerializer(source="*", read_only=True)
    adaptive = StudyAdaptiveSerializer(source="*", read_only=True)

    class Meta:
        model = Study
        fields = [
            "id",
            "name",
            "slug",
            "kind",
            "status",
            "corpus",
            "language",
            "interface_language",
            "clips_per_task",
            "target_annotations",
            "places",
            "created_at",
            "progress",
            "adaptive",
        ]


class StudyStatusSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Study.Status.choices)


class StudyViewSet(StudyWritesMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    queryset = Study.objects.select_related("corpus").order_by("-created_at", "-pk")
    serializer_class = StudySerializer
    filterset_fields = ["status", "kind", "corpus", "language"]
    import_actions = frozenset({"form_upload"})

    def get_queryset(self):
        return studies_with_progress(super().get_queryset())

    @extend_schema(
        request=StudyStatusSerializer,
        responses={200: StudySerializer},
        description="Set the study live, paused, closed or back to draft. A change the study's state does "
        "not allow is refused with 400 and the reason, e.g. back to draft once participants have entered.",
    )
    @action(detail=True, methods=["post"], url_path="status", required_perms=("annotation.change_study",))
    def set_status(self, request, pk: int):
        study = self.get_object()
        serializer = StudyStatusSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            study = study_status_set(study=study, status=serializer.validated_data["status"])
        except ValueError as refusal:
            raise ValidationError({"status": [str(refusal)]}) from None
        return Response(self.get_serializer(study).data)
