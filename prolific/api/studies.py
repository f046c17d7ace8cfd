"""Studies on Prolific through the API, as in the admin:

- GET/POST /prolific-studies/ and GET/PATCH /prolific-studies/{id}/ (annotation.*_prolificstudy): a
  POST names our study and takes what it leaves out from the proposal (minutes from the clips,
  reward from the hourly rate, MMEE's screeners); once created on Prolific only the ceiling, the
  automatic growth and the bonus budget change.
- GET /prolific-studies/{id}/cost/: the preview and the cost so far.
- POST /prolific-studies/{id}/actions/ (change_prolificstudy): create, publish, pause, resume, stop,
  grow, sync or group, queued as a job: 202 with the job, 409 while another is under way.
- GET /prolific-study-jobs/{id}/: the job as it runs.
"""

from django.db import IntegrityError, transaction
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.jobs import JOB_FIELDS, JobRetrieveMixin
from prolific.models import ProlificParticipantGroup, ProlificStudy, ProlificStudyJob
from prolific.services import costs as prolific_costs
from prolific.services.studies import (
    EDITABLE_WHILE_RUNNING,
    GROUP_MEMBERS,
    RESEARCHER_FIELDS,
    prolific_study_propose,
)
from prolific.services.study_jobs import JobBusy, prolific_study_job_create

READ_ONLY = ["id", "prolific_id", "status", "total_available_places", "synced_at", "created_at"]


def _names(value, field: str) -> None:
    if not (isinstance(value, list) and all(isinstance(item, str) and item for item in value)):
        raise ValidationError({field: ['Give a list of names, e.g. ["desktop"].']})


class ProlificStudySerializer(serializers.ModelSerializer):
    class Meta:
        model = ProlificStudy
        fields = [*READ_ONLY, *RESEARCHER_FIELDS]
        read_only_fields = READ_ONLY
        # Filled from the proposal when left out of a POST.
        extra_kwargs = {
            name: {"required": False}
            for name in ("name", "description", "estimated_minutes", "reward_cents", "places", "language")
        }

    def validate(self, attrs):
        instance = self.instance
        if instance is not None:
            if "study" in attrs and attrs["study"] != instance.study:
                raise ValidationError({"study": ["A Prolific study stays with the study it was made for."]})
            if instance.created_on_prolific:
                frozen = sorted(set(attrs) - EDITABLE_WHILE_RUNNING)
                if frozen:
                    raise ValidationError({name: ["Fixed once created on Prolific."] for name in frozen})
        for name in ("device_compatibility", "peripheral_requirements", "education"):
            if name in attrs:
                _names(attrs[name], name)
        merged = {**({} if instance is None else self.to_dict(instance)), **attrs}
        ceiling, places = merged.get("places_ceiling"), merged.get("places")
        if ceiling is not None and places is not None and ceiling < places:
            raise ValidationError({"places_ceiling": [f"At least the {places} places to start with."]})
        low, high = merged.get("approval_rate_min", 99), merged.get("approval_rate_max", 100)
        if low > high:
            raise ValidationError({"approval_rate_min": ["Must not be above approval_rate_max."]})
        return attrs

    @staticmethod
    def to_dict(instance) -> dict:
        return {"places_ceiling": instance.places_ceiling, "places": instance.places,
                "approval_rate_min": instance.approval_rate_min, "approval_rate_max": instance.approval_rate_max}  # fmt: skip

    def create(self, validated_data):
        proposal = prolific_study_propose(study=validated_data["study"])
        for name, value in validated_data.items():
            setattr(proposal, name, value)
        if "reward_cents" not in validated_data and "hourly_rate_cents" in validated_data:
            from prolific.services.studies import reward_cents_for

            proposal.reward_cents = reward_cents_for(
                minutes=proposal.estimated_minutes, hourly_rate_cents=proposal.hourly_rate_cents
            )
        try:
            with transaction.atomic():
                proposal.save()
        except IntegrityError:
            raise ValidationError({"study": ["This study already has a Prolific study."]}) from None
        return proposal


class CostSerializer(serializers.Serializer):
    rewards = serializers.IntegerField(help_text="Cents.")
    screen_outs = serializers.IntegerField(help_text="Cents: fixed screen-out payments.")
    bonuses = serializers.IntegerField(help_text="Cents.")
    fee_rate = serializers.FloatField(help_text="Prolific's service fee (PROLIFIC_SERVICE_FEE).")
    fee = serializers.IntegerField(help_text="Cents.")
    total = serializers.IntegerField(help_text="Cents.")


class CostsSerializer(serializers.Serializer):
    currency = serializers.CharField()
    preview = CostSerializer(help_text="Every place paid, every screen-out slot used, the bonus budget.")
    preview_at_ceiling = CostSerializer(allow_null=True, help_text="The same, grown to the places ceiling.")
    so_far = CostSerializer(help_text="Completed and not rejected, screened out, bonuses paid.")


class ActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=ProlificStudyJob.Action.choices)
    members = serializers.ChoiceField(choices=list(GROUP_MEMBERS), required=False, help_text="For group.")
    group = serializers.PrimaryKeyRelatedField(
        queryset=ProlificParticipantGroup.objects.all(), required=False, allow_null=True, help_text="For group."
    )
    group_name = serializers.CharField(required=False, allow_blank=True, max_length=200, help_text="A new group's.")

    def validate(self, attrs):
        if attrs["action"] == ProlificStudyJob.Action.GROUP and "members" not in attrs:
            raise ValidationError({"members": ["Who goes into the group: annotators or rejected."]})
        return attrs


class ProlificStudyJobSerializer(serializers.ModelSerializer):
    class Meta:
        model = ProlificStudyJob
        fields = ["id", "prolific_study", "action", "outcome", *JOB_FIELDS]
        read_only_fields = fields


class ProlificStudyViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, mixins.UpdateModelMixin, ApiViewSet
):
    queryset = ProlificStudy.objects.select_related("study", "exclude_group").order_by("-created_at", "-pk")
    serializer_class = ProlificStudySerializer
    filterset_fields = ["study", "status"]
    http_method_names = ["get", "post", "patch", "head", "options"]

    @extend_schema(responses={200: CostsSerializer})
    @action(detail=True, methods=["get"], url_path="cost")
    def cost(self, request, pk: int):
        prolific_study = self.get_object()
        ceiling = prolific_study.places_ceiling
        body = {
            "currency": prolific_study.study.reward_currency,
            "preview": _cost(prolific_costs.prolific_cost_preview(prolific_study)),
            "preview_at_ceiling": _cost(prolific_costs.prolific_cost_preview(prolific_study, places=ceiling))
            if ceiling
            else None,
            "so_far": _cost(prolific_costs.prolific_cost_so_far(prolific_study)),
        }
        return Response(body)

    @extend_schema(
        request=ActionSerializer,
        responses={202: ProlificStudyJobSerializer, 409: ProlificStudyJobSerializer},
        description="Queue an action on Prolific; poll the job it answers. 409 with the job under way "
        "while another action of this study is queued or running.",
    )
    @action(detail=True, methods=["post"], url_path="actions", required_perms=("prolific.change_prolificstudy",))
    def act(self, request, pk: int):
        prolific_study = self.get_object()
        serializer = ActionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        params = dict(serializer.validated_data)
        name = params.pop("action")
        try:
            job = prolific_study_job_create(
                prolific_study=prolific_study,
                action=name,
                user=request.user,
                site_url=request.build_absolute_uri("/"),
                **params,
            )
        except JobBusy as busy:
            return Response(ProlificStudyJobSerializer(busy.job).data, status=status.HTTP_409_CONFLICT)
        return Response(ProlificStudyJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


def _cost(cost) -> dict:
    return {
        "rewards": cost.rewards,
        "screen_outs": cost.screen_outs,
        "bonuses": cost.bonuses,
        "fee_rate": cost.fee_rate,
        "fee": cost.fee,
        "total": cost.total,
    }


class ProlificStudyJobViewSet(JobRetrieveMixin, ApiViewSet):
    queryset = ProlificStudyJob.objects.all()
    serializer_class = ProlificStudyJobSerializer
    required_perms = ("prolific.view_prolificstudy",)
