"""Submitted annotations in the admin: read-only, filtered by study, participant, language, clip and date.

Participants stay opaque (their pk) to staff who cannot review them; their
Prolific id is shown, and searchable, only with change_participant, the
permission the review page asks for. Answers are never edited here.
"""

from django.contrib import admin
from django.db.models import Prefetch
from django.urls import reverse
from django.utils.html import format_html

from annotation.admin.answer_text import compact_levels, form_answer, marked_words
from annotation.admin.base import PlatformModelAdmin
from annotation.models import Annotation, Participant, Word
from annotation.participant_names import participant_annotator_id, participant_display_name, sees_prolific_ids

# Query parameters other pages link with (the participant review, the study page).
PARTICIPANT_PARAM = "participant"
STUDY_PARAM = "participant__study__id__exact"
# As the admin's has_view_permission: change stands in for view.
VIEWS_ANNOTATIONS = ("annotation.view_annotation", "annotation.change_annotation")


def study_annotations_url(request, *, study_id: int | str) -> str | None:
    """The list filtered to one study, for users who may open it; None for the others, whose
    pages then show no link. Add `&participant=<pk>` for one participant's annotations."""
    if not any(request.user.has_perm(perm) for perm in VIEWS_ANNOTATIONS):
        return None
    return f"{reverse('admin:annotation_annotation_changelist')}?{STUDY_PARAM}={study_id}"


def _sees_prolific_ids(request) -> bool:
    return sees_prolific_ids(request.user)


def _participant_column(request) -> str:
    """The participant column (list and detail page) this user may see."""
    return "participant_with_prolific_id" if _sees_prolific_ids(request) else "participant_ref"


def _participant_label(participant: Participant, *, with_prolific_id: bool) -> str:
    """The annotator id every artefact of the study uses, with the display name (the Prolific id,
    or local #N) for who may see it (annotation.participant_names)."""
    annotator = participant_annotator_id(
        study_slug=participant.study.slug, participant_pk=participant.pk, prolific_pid=participant.prolific_pid
    )
    if not with_prolific_id:
        return annotator
    return f"{annotator} ({participant_display_name(participant_pk=participant.pk, prolific_pid=participant.prolific_pid)})"


class ParticipantFilter(admin.SimpleListFilter):
    """One participant's annotations, as linked from the review page. Offers no
    choices of its own (a study has thousands): it shows only the one chosen."""

    title = "participant"
    parameter_name = PARTICIPANT_PARAM

    def lookups(self, request, model_admin):
        chosen = (
            Participant.objects.select_related("study").filter(pk=self.value()).first()
            if (self.value() or "").isdigit()
            else None
        )
        if chosen is None:
            return []
        return [(str(chosen.pk), _participant_label(chosen, with_prolific_id=_sees_prolific_ids(request)))]

    def queryset(self, request, queryset):
        if (self.value() or "").isdigit():
            return queryset.filter(participant_id=self.value())
        return queryset


class ParticipantFinishedFilter(admin.SimpleListFilter):
    title = "participant finished"
    parameter_name = "finished"

    def lookups(self, request, model_admin):
        return [("yes", "Yes"), ("no", "No")]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(participant__completed_at__isnull=self.value() == "no")
        return queryset


@admin.register(Annotation)
class AnnotationAdmin(PlatformModelAdmin):
    list_display = [
        "submitted_at",
        "study",
        "participant_ref",
        "clip_ref",
        "answer",
        "mismatch_reported",
        "attention_check",
        "seconds",
    ]
    list_display_links = ["submitted_at"]
    list_filter = [
        "participant__study",
        ("participant__decision", admin.ChoicesFieldListFilter),
        ParticipantFinishedFilter,
        ParticipantFilter,
        "clip__language",
        "mismatch_reported",
    ]
    list_select_related = ["participant__study", "clip", "item__study_item__form_item"]
    list_per_page = 50
    show_full_result_count = False  # a second COUNT over every annotation on each filtered page
    date_hierarchy = "submitted_at"
    ordering = ["-submitted_at", "-pk"]
    search_fields = ["clip__external_id"]
    search_help_text = "A clip id, or part of one; with participant review rights, also a whole Prolific id."
    actions = None  # nothing to do to answers in bulk: no checkboxes

    # Answers are final once written (see the model); the admin only shows them.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        # The page's clips' words in one query, in order, for the readable levels.
        words = Prefetch("clip__words", queryset=Word.objects.order_by("index").only("clip_id", "text"))
        return super().get_queryset(request).prefetch_related(words)

    def get_list_display(self, request):
        return [_participant_column(request) if name == "participant_ref" else name for name in self.list_display]

    def get_search_fields(self, request):
        if _sees_prolific_ids(request):
            return [*self.search_fields, "=participant__prolific_pid"]
        return self.search_fields

    def get_fields(self, request, obj=None):
        return [
            "submitted_at",
            "study",
            _participant_column(request),
            "clip",
            "answer",
            "levels",
            "response",
            "mismatch_reported",
            "attention_check",
            "coverage",
            "seconds_spent",
        ]

    def get_readonly_fields(self, request, obj=None):
        return self.get_fields(request, obj)

    # -- columns -------------------------------------------------------------

    @admin.display(description="study", ordering="participant__study__name")
    def study(self, annotation):
        return annotation.participant.study

    @admin.display(description="participant", ordering="participant_id")
    def participant_ref(self, annotation):
        return self._participant_link(annotation.participant, with_prolific_id=False)

    @admin.display(description="participant", ordering="participant_id")
    def participant_with_prolific_id(self, annotation):
        return self._participant_link(annotation.participant, with_prolific_id=True)

    @admin.display(description="clip", ordering="clip__external_id")
    def clip_ref(self, annotation):
        return annotation.clip.external_id

    @admin.display(description="answer")
    def answer(self, annotation):
        words = [word.text for word in annotation.clip.words.all()]
        form_item = _form_item(annotation)
        if form_item is not None:
            text = form_answer(form_item, response=annotation.response, levels=annotation.levels, words=words)
        else:
            text = marked_words(words, annotation.levels)
        return format_html('<span title="levels: {}">{}</span>', compact_levels(annotation.levels) or "-", text)

    @admin.display(description="attention check")
    def attention_check(self, annotation):
        """Empty for an ordinary item; for a check, whether it was passed."""
        form_item = _form_item(annotation)
        if annotation.item.attention_check_id is None and not (form_item and form_item.is_attention_check):
            return None
        return "passed" if annotation.attention_passed else "failed"

    @admin.display(description="seconds", ordering="seconds_spent")
    def seconds(self, annotation):
        return f"{annotation.seconds_spent:.1f}"

    def _participant_link(self, participant: Participant, *, with_prolific_id: bool):
        # Filters this list to the participant: their other answers are what a reviewer looks at next.
        label = _participant_label(participant, with_prolific_id=with_prolific_id)
        url = f"{reverse('admin:annotation_annotation_changelist')}?{PARTICIPANT_PARAM}={participant.pk}"
        return format_html('<a href="{}">{}</a>', url, label)


def _form_item(annotation: Annotation):
    """The listening-form item answered, or None for an emphasis clip."""
    study_item = annotation.item.study_item
    return study_item.form_item if study_item is not None else None
