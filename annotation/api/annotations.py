"""The raw annotations of a study: GET /studies/{study_pk}/annotations/ (annotation.view_annotation).

Annotators are opaque ids, the same as in label sets and exports
(annotation.participant_names). Their Prolific ids come only with
?prolific_ids=true, which needs annotation.change_participant, the permission the participant
review asks for.
"""

import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers

from annotation.models import Annotation, Participant, Study
from annotation.participant_names import PARTICIPANT_PERMISSION, participant_annotator_id
from annotation.selectors.study_progress import (
    PARTICIPANT_STATUSES,
    participant_status_expression,
    participant_status_q,
)
from annotation.shared.access import require_perm
from annotation.shared.api.base import ApiViewSet

REVIEWS_PARTICIPANTS = PARTICIPANT_PERMISSION
STATUS_CHOICES = [(name, name) for name in PARTICIPANT_STATUSES]


class AnnotationFilter(django_filters.FilterSet):
    language = django_filters.CharFilter(field_name="clip__language", help_text="The clip's language.")
    decision = django_filters.ChoiceFilter(
        field_name="participant__decision", choices=Participant.Decision.choices, help_text="The review decision."
    )
    participant_status = django_filters.ChoiceFilter(
        choices=STATUS_CHOICES,
        method="filter_participant_status",
        help_text="Where the annotator stands: completed, screened_out or in_progress.",
    )
    attention_check = django_filters.BooleanFilter(
        field_name="item__attention_check",
        lookup_expr="isnull",
        exclude=True,
        help_text="true: only answers to attention checks; false: only the study's clips.",
    )
    submitted = django_filters.DateFromToRangeFilter(
        field_name="submitted_at", help_text="submitted_after / submitted_before: dates (UTC), both days included."
    )

    class Meta:
        model = Annotation
        fields = ["language", "decision", "participant_status", "attention_check", "submitted"]

    def filter_participant_status(self, queryset, name, value):
        return queryset.filter(participant_status_q(value, through="participant__"))


class AnnotationQuerySerializer(serializers.Serializer):
    prolific_ids = serializers.BooleanField(
        default=False, help_text=f"Add each annotator's Prolific id (needs {REVIEWS_PARTICIPANTS})."
    )


class AnnotationSerializer(serializers.ModelSerializer):
    clip_id = serializers.CharField(source="clip.external_id", help_text="The clip's id in its corpus manifest.")
    language = serializers.CharField(source="clip.language")
    annotator = serializers.SerializerMethodField(help_text="Opaque and stable within the study.")
    prolific_id = serializers.SerializerMethodField(help_text="Only with ?prolific_ids=true; null otherwise.")
    participant_decision = serializers.ChoiceField(source="participant.decision", choices=Participant.Decision.choices)
    participant_status = serializers.ChoiceField(choices=STATUS_CHOICES)
    attention_check = serializers.SerializerMethodField()

    class Meta:
        model = Annotation
        fields = [
            "id",
            "clip",
            "clip_id",
            "language",
            "annotator",
            "prolific_id",
            "participant_decision",
            "participant_status",
            "levels",
            "response",
            "mismatch_reported",
            "attention_check",
            "attention_passed",
            "coverage",
            "seconds_spent",
            "submitted_at",
        ]

    def get_annotator(self, annotation) -> str:
        participant = annotation.participant
        return participant_annotator_id(
            study_slug=self.context["study"].slug, participant_pk=participant.pk, prolific_pid=participant.prolific_pid
        )

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_prolific_id(self, annotation) -> str | None:
        return annotation.participant.prolific_pid if self.context["prolific_ids"] else None

    def get_attention_check(self, annotation) -> bool:
        return annotation.item.attention_check_id is not None


@extend_schema(parameters=[AnnotationQuerySerializer])
class StudyAnnotationViewSet(mixins.ListModelMixin, ApiViewSet):
    queryset = Annotation.objects.all()
    serializer_class = AnnotationSerializer
    filterset_class = AnnotationFilter

    def list(self, request, *args, **kwargs):
        options = AnnotationQuerySerializer(data=request.query_params)
        options.is_valid(raise_exception=True)
        self.prolific_ids = options.validated_data["prolific_ids"]
        if self.prolific_ids:
            require_perm(request, REVIEWS_PARTICIPANTS)
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no study
            return Annotation.objects.none()
        return (
            Annotation.objects.filter(participant__study=self.study)
            .select_related("participant", "clip", "item")
            .annotate(participant_status=participant_status_expression(through="participant__"))
            .order_by("submitted_at", "pk")
        )

    def get_serializer_context(self):
        prolific_ids = getattr(self, "prolific_ids", False)
        return {**super().get_serializer_context(), "study": self.study, "prolific_ids": prolific_ids}

    @property
    def study(self) -> Study:
        if not hasattr(self, "_study"):
            self._study = get_object_or_404(Study, pk=self.kwargs["study_pk"])
        return self._study
