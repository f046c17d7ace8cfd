"""Webhook endpoints through the API (annotation.services.webhooks sends the events; docs/api.md
"Webhooks"), with the admin's rules: an http(s) URL at a public address (annotation.public_addresses),
at least one event. The signing secret is made with the endpoint and is in the create's answer only.

GET    /webhook-endpoints/, /webhook-endpoints/{id}/   annotation.view_webhookendpoint
POST   /webhook-endpoints/                             annotation.add_webhookendpoint: 201, with `secret`
PATCH  /webhook-endpoints/{id}/ (or PUT)               annotation.change_webhookendpoint
DELETE /webhook-endpoints/{id}/                        annotation.delete_webhookendpoint
"""

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.response import Response

from annotation.models import WebhookEndpoint, WebhookEvent
from annotation.public_addresses import validate_public_url
from annotation.shared.api.base import ApiViewSet


class WebhookEndpointSerializer(serializers.ModelSerializer):
    url = serializers.URLField(
        max_length=500,
        validators=[validate_public_url],
        help_text="Where the events are POSTed: http(s), at a public address.",
    )
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=WebhookEvent.choices),
        min_length=1,
        help_text="The event types sent to this URL.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "url", "description", "events", "active", "created_at"]
        read_only_fields = ["id", "created_at"]

    def validate_events(self, events: list[str]) -> list[str]:
        return list(dict.fromkeys(events))  # each once, in the order given


class WebhookEndpointCreatedSerializer(WebhookEndpointSerializer):
    secret = serializers.CharField(
        read_only=True, help_text="The signing secret (Standard Webhooks): in this answer only, never shown again."
    )

    class Meta(WebhookEndpointSerializer.Meta):
        fields = [*WebhookEndpointSerializer.Meta.fields, "secret"]


class WebhookEndpointViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    ApiViewSet,
):
    queryset = WebhookEndpoint.objects.order_by("url", "pk")
    serializer_class = WebhookEndpointSerializer
    filterset_fields = ["active"]

    @extend_schema(request=WebhookEndpointSerializer, responses={201: WebhookEndpointCreatedSerializer})
    def create(self, request):
        """Subscribe a URL to events; the answer holds the signing secret, shown this once."""
        given = WebhookEndpointSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        endpoint = given.save()
        return Response(WebhookEndpointCreatedSerializer(endpoint).data, status=status.HTTP_201_CREATED)
