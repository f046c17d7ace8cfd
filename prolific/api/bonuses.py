"""Bonus batches through Prolific (issues 22 and 30; prolific.services.bonuses). Money in cents.

GET  /bonus-batches/               the batches, with Prolific's totals (prolific.view_bonusbatch)
POST /bonus-batches/               a quality bonus batch set up at Prolific, nothing paid (add_bonusbatch);
                                   409 naming the earlier batch when a participant already has a bonus
                                   of this reason (`repeat: true` pays it again on purpose); an
                                   Idempotency-Key answers a retry with the first response
GET  /bonus-batches/{id}/          one batch, its lines and its latest pay job; a line's prolific_pid
                                   only for who holds annotation.change_participant
POST /bonus-batches/{id}/pay/      queue its payment (prolific.pay_bonusbatch): 202 and the job; a
                                   second POST gets the same job, a paid batch 409
POST /bonus-batches/{id}/recover/  a batch left paying: reconcile, and pay again only if Prolific's
                                   record shows none of it (prolific.pay_bonusbatch): 202 and the job,
                                   409 saying why not yet
"""

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.models import Study
from annotation.participant_names import sees_prolific_ids
from annotation.shared.api.base import ApiViewSet
from annotation.shared.api.jobs import JOB_FIELDS
from prolific.client import ProlificClient, ProlificError
from prolific.models import BonusBatch, BonusLine, BonusPayJob
from prolific.services.bonuses import (
    QUALITY_BONUS,
    BonusAlreadyGiven,
    BonusRefused,
    bonus_batch_create,
    bonus_batch_pay,
    bonus_batch_recover,
    quality_bonus_lines,
)


class BonusLineSerializer(serializers.ModelSerializer):
    """A line; `prolific_pid` only for who sees Prolific ids (annotation.participant_names)."""

    prolific_pid = serializers.CharField(
        max_length=64,
        required=False,
        help_text="The participant's Prolific id: only for who holds annotation.change_participant, left out otherwise.",
    )

    class Meta:
        model = BonusLine
        fields = ["id", "participant", "prolific_pid", "amount_cents", "repeats"]

    def to_representation(self, line):
        shown = super().to_representation(line)
        if not sees_prolific_ids(getattr(self.context.get("request"), "user", None)):
            shown.pop("prolific_pid", None)
        return shown


class BonusPayJobSerializer(serializers.ModelSerializer):
    class Meta:
        model = BonusPayJob
        fields = ["id", "batch", "resend_if_unpaid", *JOB_FIELDS]


class BonusBatchSerializer(serializers.ModelSerializer):
    lines = BonusLineSerializer(many=True, read_only=True)
    latest_pay_job = serializers.SerializerMethodField()

    class Meta:
        model = BonusBatch
        fields = [
            "id",
            "study",
            "reason",
            "prolific_study_id",
            "prolific_bulk_id",
            "stage",
            "amount_cents",
            "fees_cents",
            "vat_cents",
            "total_cents",
            "overpaid_cents",
            "created_at",
            "pay_sent_at",
            "pay_accepted_at",
            "paid_at",
            "paid_how",
            "lines",
            "latest_pay_job",
        ]

    @extend_schema_field(BonusPayJobSerializer(allow_null=True))
    def get_latest_pay_job(self, batch):
        job = batch.pay_jobs.order_by("-created_at", "-pk").first()
        return BonusPayJobSerializer(job).data if job else None


class QualityBonusSerializer(serializers.Serializer):
    study = serializers.PrimaryKeyRelatedField(queryset=Study.objects.all())
    amount_cents = serializers.IntegerField(
        min_value=1, help_text="Each participant's bonus, in cents of the study's currency (150: 1.50)."
    )
    min_kappa = serializers.FloatField(min_value=-1, max_value=1)
    reason = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        default="",
        help_text=f'Why they are paid; a participant gets one bonus per reason in a study ("{QUALITY_BONUS}" '
        "when left out).",
    )
    repeat = serializers.BooleanField(
        default=False,
        help_text="Pay again, on purpose, participants who already have a bonus of this reason in the study.",
    )


class RecoverSerializer(serializers.Serializer):
    prolific_reported_failure = serializers.BooleanField(
        default=False,
        help_text="Prolific reported that the payment it accepted failed: needed to send its pay call again.",
    )


class BonusBatchViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    queryset = BonusBatch.objects.prefetch_related("lines").order_by("-created_at", "-pk")
    serializer_class = BonusBatchSerializer
    filterset_fields = ["study", "stage"]

    @extend_schema(
        request=QualityBonusSerializer,
        responses={201: BonusBatchSerializer},
        description="Set up the quality bonus at Prolific: `amount_cents` to every participant not rejected whose "
        "leave-one-out kappa is at least `min_kappa`. Nothing is paid; Prolific's total with fees is stored, in "
        "cents. A participant who already has a bonus of this reason in the study is not paid again: 409 with "
        "`earlier_batches`, unless `repeat` is true. Send an Idempotency-Key to retry safely.",
    )
    def create(self, request):
        serializer = QualityBonusSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        client = ProlificClient.from_settings(study=data["study"])
        if client is None:
            raise ValidationError({"detail": ["PROLIFIC_API_TOKEN is not set: no bonus can be set up"]})
        lines = quality_bonus_lines(study=data["study"], amount_cents=data["amount_cents"], min_kappa=data["min_kappa"])
        try:
            batch = bonus_batch_create(
                study=data["study"],
                lines=lines,
                reason=data["reason"] or QUALITY_BONUS,
                client=client,
                user=request.user,
                repeat=data["repeat"],
            )
        except BonusAlreadyGiven as given:
            body = {"detail": str(given), "earlier_batches": given.batches}
            return Response(body, status=status.HTTP_409_CONFLICT)
        except (BonusRefused, ProlificError) as refusal:
            raise ValidationError({"detail": [str(refusal)]}) from None
        return Response(self.get_serializer(batch).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses={202: BonusPayJobSerializer},
        description="Queue the payment of the batch. Sent to Prolific once: a second POST answers the job already "
        "queued, and for a batch whose pay call went out it reconciles with Prolific's record instead; a batch "
        "already paid is refused with 409.",
    )
    @action(detail=True, methods=["post"], url_path="pay", required_perms=("prolific.pay_bonusbatch",))
    def pay(self, request, pk: int):
        batch = self.get_object()
        try:
            job = bonus_batch_pay(batch=batch, user=request.user)
        except BonusRefused as refusal:
            return Response({"detail": str(refusal)}, status=status.HTTP_409_CONFLICT)
        return Response(BonusPayJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        request=RecoverSerializer,
        responses={202: BonusPayJobSerializer},
        description="Recover a batch left paying: reconcile with Prolific's record, and send the pay call again only "
        "if it shows none of the batch, no sooner than PROLIFIC_BONUS_RESEND_AFTER_SECONDS after the first call; for "
        "a call Prolific accepted, only with `prolific_reported_failure`. 409 says why not.",
    )
    @action(detail=True, methods=["post"], url_path="recover", required_perms=("prolific.pay_bonusbatch",))
    def recover(self, request, pk: int):
        batch = self.get_object()
        options = RecoverSerializer(data=request.data)
        options.is_valid(raise_exception=True)
        try:
            job = bonus_batch_recover(
                batch=batch,
                user=request.user,
                prolific_reported_failure=options.validated_data["prolific_reported_failure"],
            )
        except BonusRefused as refusal:
            return Response({"detail": str(refusal)}, status=status.HTTP_409_CONFLICT)
        return Response(BonusPayJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)
