"""The log of decisions sent to Prolific: who sent, when, and what Prolific answered. Read only:
sends are started from a study's participant review page. Who was sent, failed or skipped is named
by Prolific id: shown only with the participant permission (prolific.admin.ids)."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from annotation.admin.base import PlatformModelAdmin
from prolific.admin.ids import HidesProlificIds, hidden_field
from prolific.models import ProlificSendJob


@admin.register(ProlificSendJob)
class ProlificSendJobAdmin(HidesProlificIds, PlatformModelAdmin):
    list_display = ["study", "status", "sent_count", "failed_count", "created_by", "created_at", "review_link"]
    list_filter = ["status", "study"]
    list_select_related = ["study", "created_by"]
    fields = readonly_fields = [
        "study",
        "status",
        "phase",
        "done",
        "total",
        "error",
        "sent",
        "failed",
        "skipped",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
    ]
    # The outcome names participants by display name: their Prolific ids.
    prolific_id_fields = ("sent", "failed", "skipped")
    sent_hidden = hidden_field("sent")
    failed_hidden = hidden_field("failed")
    skipped_hidden = hidden_field("skipped")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="review")
    def review_link(self, job):
        url = reverse("admin:annotation_participant_review", args=[job.study_id])
        return format_html('<a href="{}">review study</a>', url)
