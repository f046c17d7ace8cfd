"""Bonus batches in the admin (issue 22): a quality bonus set up at Prolific from the review's
leave-one-out kappa, shown with Prolific's total, then paid by one click (a BonusPayJob; a second
click gets the same job, and a batch whose pay call went out is only reconciled), with the calls
made to Prolific for it. Creating needs add_bonusbatch, paying pay_bonusbatch; the lines' Prolific
ids are shown only with the participant permission (annotation.participant_names)."""

from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from annotation.access import require_perm
from annotation.models import Study
from annotation.participant_names import sees_prolific_ids
from annotation.views.job_progress import job_progress_response
from prolific.client import ProlificClient, ProlificError
from prolific.models import BonusBatch, BonusPayJob, ProlificCall
from prolific.services.bonuses import BonusRefused, bonus_batch_create, bonus_batch_pay, quality_bonus_lines

PAY_PERM = "prolific.pay_bonusbatch"


class QualityBonusForm(forms.Form):
    study = forms.ModelChoiceField(queryset=Study.objects.order_by("name"))
    amount = forms.DecimalField(
        min_value=Decimal("0.01"), max_digits=8, decimal_places=2, help_text="Per participant, in the study's currency."
    )
    min_kappa = forms.FloatField(
        min_value=-1, max_value=1, initial=0.5, help_text="Leave-one-out kappa at least this (the review page's)."
    )
    reason = forms.CharField(max_length=200, required=False)


@admin.register(BonusBatch)
class BonusBatchAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "reason",
        "stage",
        "line_count",
        "amount",
        "fees",
        "total_amount",
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
        "amount",
        "fees",
        "vat",
        "total_amount",
        "created_by",
        "created_at",
        "pay_sent_at",
        "paid_at",
        "paid_how",
    ]

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("<int:pk>/pay/", view(self.pay_view), name="prolific_bonusbatch_pay"),
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

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = QualityBonusForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            batch = self._create(request, form)
            if batch is not None:
                messages.success(
                    request, f"Set up at Prolific: {batch}, total {batch.total_amount}. Nothing is paid yet."
                )
                return redirect(reverse("admin:prolific_bonusbatch_change", args=[batch.pk]))
        context = {**self.admin_site.each_context(request), "title": "Quality bonus", "form": form, "opts": self.opts}
        return TemplateResponse(request, "admin/prolific/bonusbatch/create.html", context)

    def _create(self, request, form) -> BonusBatch | None:
        data = form.cleaned_data
        client = ProlificClient.from_settings(study=data["study"])
        if client is None:
            form.add_error(None, "PROLIFIC_API_TOKEN is not set: no bonus can be set up.")
            return None
        lines = quality_bonus_lines(study=data["study"], amount=data["amount"], min_kappa=data["min_kappa"])
        reason = data["reason"] or f"quality bonus: kappa at least {data['min_kappa']}"
        try:
            return bonus_batch_create(study=data["study"], lines=lines, reason=reason, client=client, user=request.user)
        except (BonusRefused, ProlificError) as refusal:
            form.add_error(None, str(refusal))
            return None

    def change_view(self, request, object_id, form_url="", extra_context=None):
        batch = get_object_or_404(BonusBatch, pk=object_id)
        calls = ProlificCall.objects.filter(study=batch.study_id, path__contains="bonus").order_by("-created_at")[:20]
        context = {
            "batch": batch,
            "lines": batch.lines.select_related("participant"),
            "job": batch.pay_jobs.order_by("-created_at", "-pk").first(),
            "may_pay": request.user.has_perm(PAY_PERM) and batch.stage != BonusBatch.Stage.PAID,
            "pay_label": f"Pay {batch.total_amount} through Prolific"
            if batch.stage == BonusBatch.Stage.CREATED
            else "Reconcile with Prolific (the pay call went out; it is not sent again)",
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

    def progress_view(self, request, job_pk: int):
        require_perm(request, "prolific.view_bonusbatch")
        job = get_object_or_404(BonusPayJob, pk=job_pk)
        return job_progress_response(request, job, template="admin/prolific/bonusbatch/progress.html")
