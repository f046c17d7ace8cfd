"""Studies in the admin: creation from a corpus selection, settings, state
changes, top-ups; the mismatch review is in study_items."""

import json

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Sum
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.access import get_study_for_staff, require_perm
from annotation.admin import study_items  # noqa: F401  (registers the study item admin)
from annotation.admin.annotations import study_annotations_url
from annotation.admin.forms import (
    AttentionCheckForm,
    PrerequisiteQuestionForm,
    StudyCreateForm,
    StudySettingsForm,
)
from annotation.admin.study_items import mismatch_review_query
from annotation.models import AttentionCheck, Participant, PrerequisiteQuestion, Study, StudyItem
from annotation.selectors.study_counts import per_study
from annotation.services.studies import study_create, study_status_refusal, study_status_set
from annotation.services.topups import topup_open, topup_plan, topup_summary
from annotation.templatetags.participant_pages import markdown

Status = Study.Status


# The states each state may be reached from. Closed may go live again for a
# top-up rerun; back to draft only while nobody has entered (checked below).


class PrerequisiteQuestionInline(admin.TabularInline):
    model = PrerequisiteQuestion
    form = PrerequisiteQuestionForm
    extra = 0


class AttentionCheckInline(admin.TabularInline):
    model = AttentionCheck
    form = AttentionCheckForm
    raw_id_fields = ["clip"]
    extra = 0


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    form = StudySettingsForm
    list_display = [
        "name", "status", "language", "clip_count", "completed_annotations", "participant_count",
        "awaiting_review", "participant_link", "created_at",
    ]  # fmt: skip
    list_filter = ["status", "language", "corpus"]
    search_fields = ["name", "slug"]
    list_select_related = ["corpus"]
    raw_id_fields = ["example_clip"]
    inlines = [PrerequisiteQuestionInline, AttentionCheckInline]
    actions = ["set_live", "set_paused", "set_closed", "set_draft"]
    change_form_template = "admin/annotation/study/change_form.html"
    readonly_fields = [
        "status", "kind", "corpus", "selection_text", "participant_link", "completion_code", "screen_out_code",
        "instructions_preview", "created_at",
    ]  # fmt: skip
    fieldsets = [
        (None, {"fields": [
            "name", "slug", "kind", "status", "participant_link", "language", "interface_language", "text_direction",
            "corpus", "selection_text",
        ]}),
        ("Tasks", {"fields": [
            "clips_per_task", "target_annotations", "places", "allow_repeat_tasks", "time_limit_minutes",
            "attention_checks_per_task", "mismatch_threshold",
        ]}),
        ("Marking, playback and sound check", {"fields": [
            "min_marked_words", "max_marked_fraction", "required_coverage", "sound_check", "sound_check_tries",
        ]}),
        ("Participant pages", {"fields": [
            "instructions", "instructions_preview", "example_clip", "example_levels", "consent_text",
        ]}),
        ("Payment and Prolific codes", {"fields": [
            "reward", "reward_currency", "estimated_minutes", "completion_code", "screen_out_code",
        ]}),
        ("Participant review thresholds", {"fields": [
            "review_min_attention", "review_min_kappa", "review_min_time_ratio",
        ]}),
    ]  # fmt: skip
    # Settings that only an emphasis study reads: a listening form marks no words on a transcript
    # (its stressed-word items have their own gold), has no mismatch checkbox, worked example or
    # attention-check clips (its checks are items), and no word-level kappa.
    EMPHASIS_ONLY = frozenset(
        ["min_marked_words", "max_marked_fraction", "mismatch_threshold", "example_clip", "example_levels",
         "review_min_kappa"]
    )  # fmt: skip

    def get_fieldsets(self, request, obj=None):
        if obj is None or obj.kind == Study.Kind.EMPHASIS:
            return self.fieldsets
        return [
            ("Playback and sound check" if name == "Marking, playback and sound check" else name,
             {**options, "fields": [f for f in options["fields"] if f not in self.EMPHASIS_ONLY]})
            for name, options in self.fieldsets
        ]  # fmt: skip

    def get_inlines(self, request, obj):
        if obj is not None and obj.kind == Study.Kind.LISTENING_FORM:
            return [PrerequisiteQuestionInline]  # a form's attention checks are items of the form
        return self.inlines

    def get_urls(self):
        return [
            path("<int:pk>/topup/", self.admin_site.admin_view(self.topup_view), name="annotation_study_topup"),
            *super().get_urls(),
        ]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                clip_count=per_study(StudyItem.objects, n=Count("pk")),
                completed_annotations=per_study(StudyItem.objects, n=Sum("completed_count")),
                participant_count=per_study(Participant.objects, n=Count("pk")),
                awaiting_review=per_study(
                    StudyItem.objects.filter(review=StudyItem.Review.NEEDS_REVIEW), n=Count("pk")
                ),
            )
        )

    # -- creation -----------------------------------------------------------

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = StudyCreateForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                study = study_create(
                    name=form.cleaned_data["name"], corpus=form.cleaned_data["corpus"],
                    selection=form.selection(), **form.settings(),
                )  # fmt: skip
            except ValueError as error:
                form.add_error(None, str(error))
            else:
                items = study.items.count()
                messages.success(request, f"Created draft study {study.name!r} with {items} clip(s).")
                return redirect(reverse("admin:annotation_study_change", args=[study.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Create a study",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/annotation/study/create.html", context)

    # -- top-ups ------------------------------------------------------------

    def topup_view(self, request, pk: int):
        # As the admin's has_view_permission: change_study stands in for view_study.
        study = get_study_for_staff(request, pk, perm=("annotation.view_study", "annotation.change_study"))
        if request.method == "POST":
            require_perm(request, "annotation.change_study")
            opened = topup_open(study=study)
            messages.success(request, topup_summary(opened.plan, opened))
            return redirect(reverse("admin:annotation_study_topup", args=[study.pk]))
        plan = topup_plan(study=study)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Top-ups: {study.name}",
            "opts": self.model._meta,
            "original": study,
            "plan": plan,
            "summary": topup_summary(plan),
            "can_open": self.has_change_permission(request, study) and bool(plan.places_to_open),
        }
        return TemplateResponse(request, "admin/annotation/study/topup.html", context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        review_url = reverse("admin:annotation_studyitem_changelist") + mismatch_review_query(object_id)
        annotations_url = study_annotations_url(request, study_id=object_id)
        extra_context = {"mismatch_review_url": review_url, "annotations_url": annotations_url, **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra_context)

    # -- state changes ------------------------------------------------------

    @admin.action(description="Set live (hand out work)", permissions=["change"])
    def set_live(self, request, queryset):
        self._move(request, queryset, Status.LIVE)

    @admin.action(description="Pause (stop handing out work)", permissions=["change"])
    def set_paused(self, request, queryset):
        self._move(request, queryset, Status.PAUSED)

    @admin.action(description="Close", permissions=["change"])
    def set_closed(self, request, queryset):
        self._move(request, queryset, Status.CLOSED)

    @admin.action(description="Back to draft (only if nobody has entered)", permissions=["change"])
    def set_draft(self, request, queryset):
        self._move(request, queryset, Status.DRAFT)

    def _move(self, request, queryset, status: str) -> None:
        moved, refused = [], []
        for study in queryset:
            reason = study_status_refusal(study=study, status=status)
            if reason:
                refused.append(f"{study.name} ({reason})")
            else:
                study_status_set(study=study, status=status)
                moved.append(study.name)
        if moved:
            self.message_user(request, f"Set {status}: {', '.join(moved)}.", messages.SUCCESS)
        if refused:
            self.message_user(request, f"Not set {status}: {'; '.join(refused)}.", messages.WARNING)

    # -- read-only displays -------------------------------------------------

    @admin.display(description="clips", ordering="clip_count")
    def clip_count(self, study):
        return study.clip_count

    @admin.display(description="annotations", ordering="completed_annotations")
    def completed_annotations(self, study):
        return study.completed_annotations

    @admin.display(description="participants", ordering="participant_count")
    def participant_count(self, study):
        return study.participant_count

    @admin.display(description="to review", ordering="awaiting_review")
    def awaiting_review(self, study):
        if not study.awaiting_review:
            return 0
        url = reverse("admin:annotation_studyitem_changelist") + mismatch_review_query(study.pk)
        return format_html('<a href="{}">{}</a>', url, study.awaiting_review)

    @admin.display(description="participant link")
    def participant_link(self, study):
        url = reverse("annotation:entry", kwargs={"slug": study.slug})
        return format_html('<a href="{}">{}</a>', url, url)

    @admin.display(description="selection")
    def selection_text(self, study):
        return json.dumps(study.selection, ensure_ascii=False) if study.selection else "the whole corpus"

    @admin.display(description="instructions as shown")
    def instructions_preview(self, study):
        return markdown(study.instructions) if study.instructions else "-"
