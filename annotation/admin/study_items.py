"""Study items in the admin, and the mismatch review: clips reported as not
matching their transcript are out of assignment until cleared or excluded
(the moves allowed are in annotation.services.study_item_review)."""

from django.contrib import admin, messages
from django.utils.html import format_html

from annotation.admin.base import PlatformModelAdmin
from annotation.audio_links import signed_audio_url
from annotation.models import StudyItem
from annotation.services.study_item_review import study_item_review_set

Review = StudyItem.Review


def mismatch_review_query(study_id: int | str) -> str:
    """The changelist query that lists a study's items awaiting review."""
    return f"?study__id__exact={study_id}&review__exact={Review.NEEDS_REVIEW}"


@admin.register(StudyItem)
class StudyItemAdmin(PlatformModelAdmin):
    list_display = [
        "clip_id_text",
        "language",
        "transcript",
        "player",
        "mismatch_count",
        "completed_count",
        "reserved_count",
        "review",
        "study",
    ]
    list_filter = ["review", "study", "clip__language"]
    search_fields = ["clip__external_id", "clip__transcript"]
    list_select_related = ["clip", "study"]
    readonly_fields = [
        "study",
        "clip",
        "player",
        "transcript",
        "completed_count",
        "reserved_count",
        "mismatch_count",
        "review",
    ]
    fields = readonly_fields
    actions = ["clear_after_review", "exclude_from_assignment"]

    # Items come from creating a study and carry the counts assignment relies
    # on; they are never added or deleted by hand.
    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="clip id", ordering="clip__external_id")
    def clip_id_text(self, item):
        return item.clip.external_id

    @admin.display(description="language", ordering="clip__language")
    def language(self, item):
        return item.clip.language or "-"

    @admin.display(description="transcript")
    def transcript(self, item):
        return item.clip.transcript

    @admin.display(description="listen")
    def player(self, item):
        if not item.clip.browser_audio:
            return "-"
        url = signed_audio_url(item.clip.browser_audio.name)
        return format_html('<audio controls preload="none" src="{}"></audio>', url)

    @admin.action(description="Clear: the audio matches; back in assignment", permissions=["change"])
    def clear_after_review(self, request, queryset):
        cleared = study_item_review_set(items=queryset, state=Review.CLEARED)
        self._report(request, cleared, queryset.count(), "cleared and back in assignment", "not awaiting review")

    @admin.action(description="Exclude: never assign again", permissions=["change"])
    def exclude_from_assignment(self, request, queryset):
        excluded = study_item_review_set(items=queryset, state=Review.EXCLUDED)
        self._report(request, excluded, queryset.count(), "excluded from assignment", "already excluded")

    def _report(self, request, changed: int, selected: int, done: str, why_skipped: str) -> None:
        self.message_user(request, f"{changed} clip(s) {done}.", messages.SUCCESS)
        if selected > changed:
            self.message_user(
                request, f"{selected - changed} clip(s) left as they were ({why_skipped}).", messages.WARNING
            )
