"""Bonus batches in the admin (issues 22 and 30): a quality bonus set up at Prolific from the
review's leave-one-out kappa, shown with Prolific's total, then paid by one click (a BonusPayJob; a
second click gets the same job, and a batch whose pay call went out is only reconciled), with the
calls made to Prolific for it. A participant is paid once per reason: a second submit of the same
bonus is refused naming the first batch, unless "pay again" is ticked. A batch left paying can be
recovered (paid again only if Prolific's record shows none of it). Creating needs add_bonusbatch,
paying and recovering pay_bonusbatch; the lines' Prolific ids are shown only with the participant
permission (annotation.participant_names). Money is stored in cents and shown in the study's
currency."""

from decimal import Decimal

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from annotation.admin.base import PlatformModelAdmin
from annotation.models import Study
from annotation.participant_names import sees_prolific_ids
from annotation.shared.access import require_perm
from annotation.views.job_progress import job_progress_response
from prolific.client import ProlificClient, ProlificError
from prolific.models import BonusBatch, BonusPayJob, ProlificCall
from prolific.services.bonuses import (
    QUALITY_BONUS,
    BonusRefused,
    bonus_batch_create,
    bonus_batch_pay,
    bonus_batch_recover,
    quality_bonus_lines,
)
from prolific.services.costs import money

PAY_PERM = "prolific.pay_bonusbatch"


class QualityBonusForm(forms.Form):
    study = forms.ModelChoiceField(queryset=Study.objects.order_by("name"))
    amount = forms.DecimalField(
        min_value=Decimal("0.01"),
        max_digits=8,
        decimal_places=2,
        help_text="Per participant, in the study's currency (1.50: one and a half; kept in cents).",
    )
    min_kappa = forms.FloatField(
        min_value=-1, max_value=1, initial=0.5, help_text="Leave-one-out kappa at least this (the review page's)."
    )
    reason = forms.CharField(
        max_length=200,
        required=False,
        help_text=f'Why they are paid ("{QUALITY_BONUS}" when empty). A participant gets one bonus per reason in a '
        "study.",
    )
    repeat = forms.BooleanField(
        required=False,
        label="Pay again",
        help_text="Pay participants who already had a bonus of this reason in the study a second one, on purpose.",
    )

    @property
    def amount_cents(self) -> int:
        return int(self.cleaned_data["amount"] * 100)


class RecoverForm(forms.Form):
    prolific_reported_failure = forms.BooleanField(required=False, label="Prolific reported that this payment failed")


@admin.register(BonusBatch)
class BonusBatchAdmin(PlatformModelAdmin):
    list_display = [
        "__str__",
        "reason",
        "stage",
        "line_count",
        "bonuses",
        "total",
        "overpaid",
        "created_at",
        "paid_at",
    ]
    list_filter = ["stage", "study"]
    list_select_related = ["study"]
    fields = readonly_fields = [
        "study",
        "reason",
        "stage",
        "prolific_study_id",
        "prolific_bulk_id",
        "bonuses",
        "fees",
        "vat",
        "total",
        "overpaid",
        "created_by",
        "created_at",
        "pay_sent_at",
        "pay_accepted_at",
        "paid_at",
        "paid_how",
    ]

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("<int:pk>/pay/", view(self.pay_view), name="prolific_bonusbatch_pay"),
            path("<int:pk>/recover/", view(self.recover_view), name="prolific_bonusbatch_recover"),
            path("pay-progress/<int:job_pk>/", view(self.progress_view), name="prolific_bonusbatch_progress"),
            *super().get_urls(),
        ]

    def has_change_permission(self, request, obj=None):
        return False  # read only: a batch is made by the form below and changed only by paying

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(line_total=Count("lines"))

    @admin.display(description="participants", ordering="line_total")
    def line_count(self, batch):
        return batch.line_total

    @admin.display(description="bonuses", ordering="amount_cents")
    def bonuses(self, batch):
        return money(batch.amount_cents, batch.study.reward_currency)

    @admin.display(description="Prolific's fees")
    def fees(self, batch):
        return money(batch.fees_cents, batch.study.reward_currency)

    @admin.display(description="VAT")
    def vat(self, batch):
        return money(batch.vat_cents, batch.study.reward_currency)

    @admin.display(description="Prolific charges", ordering="total_cents")
    def total(self, batch):
        return money(batch.total_cents, batch.study.reward_currency)

    @admin.display(description="overpaid", ordering="overpaid_cents")
    def overpaid(self, batch):
        return money(batch.overpaid_cents, batch.study.reward_currency) if batch.overpaid_cents else ""

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = QualityBonusForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            batch = self._create(request, form)
            if batch is not None:
                total = money(batch.total_cents, batch.study.reward_currency)
                messages.success(request, f"Set up at Prolific: {batch}, total {total}. Nothing is paid yet.")
                return redirect(reverse("admin:prolific_bonusbatch_change", args=[batch.pk]))
        context = {**self.admin_site.each_context(request), "title": "Quality bonus", "form": form, "opts": self.opts}
        return TemplateResponse(request, "admin/prolific/bonusbatch/create.html", context)

    def _create(self, request, form) -> BonusBatch | None:
        data = form.cleaned_data
        client = ProlificClient.from_settings(study=data["study"])
        if client is None:
            form.add_error(None, "PROLIFIC_API_TOKEN is not set: no bonus can be set up.")
            return None
        lines = quality_bonus_lines(study=data["study"], amount_cents=form.amount_cents, min_kappa=data["min_kappa"])
        try:
            return bonus_batch_create(
                study=data["study"],
                lines=lines,
                reason=data["reason"] or QUALITY_BONUS,
                client=client,
                user=request.user,
                repeat=data["repeat"],
            )
        except (BonusRefused, ProlificError) as refusal:
            form.add_error(None, str(refusal))
            return None

    def change_view(self, request, object_id, form_url="", extra_context=None):
        batch = get_object_or_404(BonusBatch, pk=object_id)
        calls = ProlificCall.objects.filter(study=batch.study_id, path__contains="bonus").order_by("-created_at")[:20]
        context = {
            "batch": batch,
            "lines": batch.lines.select_related("participant", "repeats"),
            "job": batch.pay_jobs.order_by("-created_at", "-pk").first(),
            "may_pay": request.user.has_perm(PAY_PERM) and batch.stage != BonusBatch.Stage.PAID,
            "pay_label": f"Pay {money(batch.total_cents, batch.study.reward_currency)} through Prolific"
            if batch.stage == BonusBatch.Stage.CREATED
            else "Reconcile with Prolific (the pay call went out; it is not sent again)",
            "may_recover": request.user.has_perm(PAY_PERM) and batch.stage == BonusBatch.Stage.PAYING,
            "failure_choices": [("", "has not reported a failure"), ("on", "reported that this payment failed")],
            "resend_after_minutes": settings.PROLIFIC_BONUS_RESEND_AFTER_SECONDS // 60,
            "currency": batch.study.reward_currency,
            "calls": calls,
            "sees_prolific_ids": sees_prolific_ids(request.user),
            **(extra_context or {}),
        }
        return super().change_view(request, object_id, form_url, extra_context=context)

    def pay_view(self, request, pk: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        require_perm(request, PAY_PERM)
        batch = get_object_or_404(BonusBatch, pk=pk)
        try:
            job = bonus_batch_pay(batch=batch, user=request.user)
        except BonusRefused as refusal:
            messages.error(request, str(refusal))
        else:
            messages.info(request, f"Paying {batch} (job #{job.pk}): Prolific is called once, whatever is clicked.")
        return redirect(reverse("admin:prolific_bonusbatch_change", args=[batch.pk]))

    def recover_view(self, request, pk: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        require_perm(request, PAY_PERM)
        batch = get_object_or_404(BonusBatch, pk=pk)
        form = RecoverForm(request.POST)
        form.is_valid()  # one optional checkbox: always valid
        try:
            job = bonus_batch_recover(
                batch=batch, user=request.user, prolific_reported_failure=form.cleaned_data["prolific_reported_failure"]
            )
        except BonusRefused as refusal:
            messages.error(request, str(refusal))
        else:
            messages.info(
                request,
                f"Recovering {batch} (job #{job.pk}): paid again only if Prolific's record shows none of it.",
            )
        return redirect(reverse("admin:prolific_bonusbatch_change", args=[batch.pk]))

    def progress_view(self, request, job_pk: int):
        require_perm(request, "prolific.view_bonusbatch")
        job = get_object_or_404(BonusPayJob, pk=job_pk)
        return job_progress_response(request, job, template="admin/prolific/bonusbatch/progress.html")
