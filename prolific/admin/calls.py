"""Every call made to Prolific's API and its answer (ProlificCall), for the researcher to read:
what was sent, what came back, how long it took, and which attempt it was. Read only. The bodies
hold Prolific ids (csv_bonuses, participant_ids, submissions' participant_id): shown only with the
participant permission (prolific.admin.ids)."""

from django.contrib import admin

from annotation.admin.base import PlatformModelAdmin
from prolific.admin.ids import HidesProlificIds, hidden_field
from prolific.models import ProlificCall


@admin.register(ProlificCall)
class ProlificCallAdmin(HidesProlificIds, PlatformModelAdmin):
    list_display = ["created_at", "study", "method", "path", "status", "attempt", "duration_ms"]
    list_filter = ["status", "method", "study"]
    list_select_related = ["study"]
    search_fields = ["path"]
    date_hierarchy = "created_at"
    fields = readonly_fields = [
        "created_at",
        "study",
        "method",
        "path",
        "attempt",
        "status",
        "error",
        "duration_ms",
        "request_body",
        "response_body",
    ]
    prolific_id_fields = ("request_body", "response_body")
    request_body_hidden = hidden_field("request body")
    response_body_hidden = hidden_field("response body")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
