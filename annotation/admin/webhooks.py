"""Webhooks out: the endpoints researchers subscribe, and every delivery with each attempt's answer.

Deliveries are read only: they are made by the platform's events and sent by a worker."""

from django import forms
from django.contrib import admin

from annotation.admin.base import PlatformModelAdmin
from annotation.admin.secrets import secret_shown_once
from annotation.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from annotation.public_addresses import validate_public_url


class WebhookEndpointForm(forms.ModelForm):
    url = forms.URLField(
        max_length=500,
        assume_scheme="https",
        validators=[validate_public_url],
        help_text="Where the events are POSTed: http(s), at a public address.",
    )
    events = forms.MultipleChoiceField(
        choices=WebhookEvent.choices, widget=forms.CheckboxSelectMultiple, help_text="The events sent to this URL."
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["url", "description", "events", "active"]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(PlatformModelAdmin):
    form = WebhookEndpointForm
    list_display = ["url", "description", "active", "created_at"]
    list_filter = ["active"]
    readonly_fields = ["created_at"]

    # Whoever holds the secret can sign events as the platform: it is shown once, on the page that
    # answers "Save" of a new endpoint, to set up the receiver, and never again.
    def response_add(self, request, obj, post_url_continue=None):
        return secret_shown_once(
            request,
            self,
            obj,
            secret=obj.secret,
            what="signing secret",
            use="The receiver verifies each delivery's webhook-signature with it (Standard Webhooks).",
        )


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    fields = readonly_fields = ["number", "sent_at", "status_code", "response_ms", "error"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(PlatformModelAdmin):
    list_display = ["event_type", "endpoint", "status", "attempts", "delivered_at", "created_at"]
    list_filter = ["status", "event_type", "endpoint"]
    list_select_related = ["endpoint"]
    search_fields = ["message_id"]
    fields = readonly_fields = [
        "endpoint",
        "event_type",
        "message_id",
        "status",
        "phase",
        "attempts",
        "error",
        "delivered_at",
        "payload",
        "created_at",
        "finished_at",
    ]
    inlines = [WebhookAttemptInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
