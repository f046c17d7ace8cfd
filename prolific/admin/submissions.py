"""Prolific's submissions and webhooks in the admin (issue 22): the statuses Prolific stated (by
poll or webhook) and which task each released; every webhook taken; the webhook subscriptions,
made from here (Prolific's secret, both event types, confirmed). All read only but for the two
actions: "Poll Prolific now" (change_participant) and "Subscribe" (add_prolificwebhooksubscription).
A webhook's payload names the participant by Prolific id: shown only with change_participant."""

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from annotation.admin.base import PlatformModelAdmin
from annotation.shared.access import require_perm
from prolific.admin.ids import HidesProlificIds, hidden_field
from prolific.client import ProlificClient, ProlificError
from prolific.models import (
    ProlificSubmission,
    ProlificWebhookJob,
    ProlificWebhookReceipt,
    ProlificWebhookSubscription,
)
from prolific.services.submissions import prolific_submissions_poll
from prolific.services.webhooks import prolific_webhooks_subscribe


class ReadOnly(PlatformModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ProlificSubmission)
class ProlificSubmissionAdmin(ReadOnly):
    list_display = ["submission_id", "participant", "status", "status_at", "source", "released_task"]
    list_filter = ["status", "source"]
    search_fields = ["submission_id", "prolific_study_id"]
    fields = readonly_fields = [
        "submission_id",
        "prolific_study_id",
        "participant",
        "status",
        "status_at",
        "source",
        "released_task",
        "updated_at",
    ]

    def get_urls(self):
        poll = require_POST(self.admin_site.admin_view(self.poll_view))
        return [path("poll/", poll, name="prolific_prolificsubmission_poll"), *super().get_urls()]

    def poll_view(self, request):
        require_perm(request, "annotation.change_participant")
        client = ProlificClient.from_settings()
        if client is None:
            messages.error(request, "PROLIFIC_API_TOKEN is not set: nothing to poll.")
        else:
            outcome = prolific_submissions_poll(client=client)
            messages.info(
                request,
                f"Read {outcome['submissions']} submission(s) of {outcome['studies']} Prolific stud(ies);"
                f" {outcome['released']} task(s) released.",
            )
            for study_id, error in outcome["errors"].items():
                messages.error(request, f"Prolific study {study_id}: {error}")
        return redirect(reverse("admin:prolific_prolificsubmission_changelist"))


@admin.register(ProlificWebhookReceipt)
class ProlificWebhookReceiptAdmin(HidesProlificIds, ReadOnly):
    list_display = ["received_at", "event_type", "resource_id", "status", "outcome", "sent_at", "signed_at"]
    list_filter = ["event_type", "status"]
    search_fields = ["resource_id", "event_id"]
    fields = readonly_fields = [
        "received_at",
        "sent_at",
        "signed_at",
        "event_id",
        "event_type",
        "resource_id",
        "status",
        "outcome",
        "payload",
    ]
    prolific_id_fields = ("payload",)
    payload_hidden = hidden_field("payload")


@admin.register(ProlificWebhookJob)
class ProlificWebhookJobAdmin(ReadOnly):
    """Each webhook's job: what acted on the event, and how it ended (a study Prolific did not answer
    for is retried; one the platform cannot read, without a token, fails with why)."""

    list_display = ["receipt", "status", "attempts", "error", "created_at", "finished_at"]
    list_filter = ["status"]
    list_select_related = ["receipt"]
    fields = readonly_fields = ["receipt", "status", "phase", "attempts", "error", "created_at", "finished_at"]


class SubscribeForm(forms.Form):
    workspace_id = forms.CharField(max_length=64, help_text="Prolific's workspace (its id is in the app's URL).")
    target_url = forms.URLField(
        max_length=500, assume_scheme="https", help_text="This platform's /prolific/webhooks/, as Prolific reaches it."
    )


@admin.register(ProlificWebhookSubscription)
class ProlificWebhookSubscriptionAdmin(ReadOnly):
    list_display = ["event_type", "target_url", "workspace_id", "subscription_id", "confirmed", "created_at"]
    fields = readonly_fields = list_display

    def has_add_permission(self, request):
        return request.user.has_perm("prolific.add_prolificwebhooksubscription")

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        initial = {
            "workspace_id": getattr(settings, "PROLIFIC_WORKSPACE_ID", ""),
            "target_url": request.build_absolute_uri(reverse("prolific:webhook")),
        }
        form = SubscribeForm(request.POST or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            client = ProlificClient.from_settings()
            try:
                if client is None:
                    raise ValueError("PROLIFIC_API_TOKEN is not set: nothing can be subscribed")
                made = prolific_webhooks_subscribe(client=client, **form.cleaned_data)
            except (ValueError, ProlificError) as refusal:
                form.add_error(None, str(refusal))
            else:
                messages.success(request, f"Subscribed and confirmed at Prolific: {', '.join(map(str, made))}.")
                return redirect(reverse("admin:prolific_prolificwebhooksubscription_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "title": "Subscribe Prolific's webhooks",
            "form": form,
            "opts": self.opts,
        }
        return TemplateResponse(request, "admin/prolific/prolificwebhooksubscription/subscribe.html", context)
