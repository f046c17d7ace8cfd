"""Studies in the admin: creation from a corpus selection, settings, state
changes, top-ups; the mismatch review is in study_items."""

import json

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from annotation import headphone_stimuli
from annotation.admin import study_items  # noqa: F401  (registers the study item admin)
from annotation.admin.annotations import study_annotations_url
from annotation.admin.base import PlatformModelAdmin
from annotation.admin.study_items import mismatch_review_query
from annotation.answer_fields import numbered_words
from annotation.models import AttentionCheck, PrerequisiteQuestion, Study
from annotation.models.study import CHECKED_DESIGNS
from annotation.page_extensions import STUDY_TOPUPS, page_sections
from annotation.selectors.attention_results import attention_pass_text
from annotation.selectors.headphone_results import headphone_results
from annotation.selectors.study_counts import studies_with_counts
from annotation.selectors.study_shortfall import shortfall_text, study_shortfall
from annotation.services.adaptive_model import adaptive_model_summary
from annotation.services.studies import (
    REACHABLE_FROM,
    study_create,
    study_setting_warnings,
    study_status_refusal,
    study_status_set,
)
from annotation.services.topups import topup_open, topup_plan, topup_summary
from annotation.shared.access import get_study_for_staff, require_perm
from annotation.study_forms import (
    AttentionCheckForm,
    PrerequisiteQuestionForm,
    StudyCreateForm,
    StudySettingsForm,
)
from annotation.templatetags.participant_pages import markdown

Status = Study.Status


def _percent(p: float) -> str:
    """Two significant digits: 1.8 %, 0.14 %, 0.0024 %."""
    return f"{p * 100:.2g} %"


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
    readonly_fields = ["clip_words"]
    extra = 0

    @admin.display(description="words of the clip, by position")
    def clip_words(self, check):
        if check.pk is None:
            return "Choose the clip, save, and its words are listed here."
        return numbered_words(list(check.clip.words.order_by("index").values_list("text", flat=True)))


@admin.register(Study)
class StudyAdmin(PlatformModelAdmin):
    form = StudySettingsForm
    list_display = [
        "name",
        "status",
        "language",
        "clip_count",
        "progress",
        "participants_total",
        "clips_to_review",
        "participant_link",
        "created_at",
    ]
    list_filter = ["status", "language", "corpus"]
    search_fields = ["name", "slug"]
    list_select_related = ["corpus"]
    raw_id_fields = ["example_clip"]
    inlines = [PrerequisiteQuestionInline, AttentionCheckInline]
    actions = ["set_live", "set_paused", "set_closed", "set_draft"]
    change_form_template = "admin/annotation/study/change_form.html"
    readonly_fields = [
        "status",
        "kind",
        "progress",
        "completion",
        "live_readiness",
        "attention_check_pass_rate",
        "corpus",
        "selection_text",
        "participant_link",
        "completion_code",
        "screen_out_code",
        "instructions_preview",
        "adaptive_prior_text",
        "adaptive_model_text",
        "design_check_text",
        "headphone_check_chance",
        "headphone_check_results",
        "created_at",
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "name",
                    "slug",
                    "kind",
                    "status",
                    "live_readiness",
                    "progress",
                    "completion",
                    "participant_link",
                    "language",
                    "interface_language",
                    "text_direction",
                    "corpus",
                    "selection_text",
                ]
            },
        ),
        (
            "Tasks",
            {
                "fields": [
                    "clips_per_task",
                    "target_annotations",
                    "places",
                    "allow_repeat_tasks",
                    "time_limit_minutes",
                    "attention_checks_per_task",
                    "attention_check_pass_rate",
                    "mismatch_threshold",
                ]
            },
        ),
        (
            "Adaptive design",
            {
                "fields": [
                    "adaptive_mode",
                    "adaptive_epsilon",
                    "adaptive_min_annotators",
                    "adaptive_max_per_clip",
                    "adaptive_scalar_se",
                    "adaptive_prior_text",
                    "adaptive_predictor",
                    "adaptive_model_text",
                    "design_check_text",
                ],
                "description": "Off (fixed) by default. See the researcher's guide, “Adaptive designs”.",
            },
        ),
        (
            "Marking, playback and sound check",
            {
                "fields": [
                    "min_marked_words",
                    "max_marked_fraction",
                    "required_coverage",
                    "sound_check",
                    "sound_check_tries",
                ]
            },
        ),
        (
            "Headphone check",
            {
                "fields": [
                    "headphone_check",
                    "headphone_check_trials",
                    "huggins_pass_mark",
                    "antiphase_pass_mark",
                    "headphone_check_tries",
                    "headphone_check_chance",
                    "headphone_check_screens_out",
                    "headphone_check_results",
                ],
                "description": "After the screening questions, a page to set the volume by a reference noise, then "
                "the tests: three sounds a trial, the participant picks the one that differs. See the researcher's "
                "guide, “Headphone check”.",
            },
        ),
        (
            "Participant pages",
            {
                "fields": [
                    "instructions",
                    "instructions_preview",
                    "example_clip",
                    "example_levels",
                    "consent_text",
                ]
            },
        ),
        (
            "Payment and Prolific codes",
            {
                "fields": [
                    "reward",
                    "reward_currency",
                    "estimated_minutes",
                    "completion_code",
                    "screen_out_code",
                ]
            },
        ),
        (
            "Participant review thresholds",
            {
                "fields": [
                    "review_min_attention",
                    "review_min_kappa",
                    "review_min_time_ratio",
                ]
            },
        ),
    ]
    # Settings that only an emphasis study reads: a listening form marks no words on a transcript
    # (its stressed-word items have their own gold), has no mismatch checkbox, worked example or
    # attention-check clips (its checks are items), and no word-level kappa.
    EMPHASIS_ONLY = frozenset(
        [
            "min_marked_words",
            "max_marked_fraction",
            "mismatch_threshold",
            "example_clip",
            "example_levels",
            "review_min_kappa",
            "adaptive_mode",
            "adaptive_epsilon",
            "adaptive_min_annotators",
            "adaptive_max_per_clip",
            "adaptive_scalar_se",
            "adaptive_prior_text",
            "adaptive_predictor",
            "adaptive_model_text",
            "design_check_text",
        ]
    )

    @admin.display(description="fitted prior")
    def adaptive_prior_text(self, obj: Study) -> str:
        prior = obj.adaptive_prior or {}
        if "a" not in prior:
            return "Beta(0.5, 0.5) (Jeffreys) until enough words have two annotations"
        return f"Beta({prior['a']:.3g}, {prior['b']:.3g}) from {prior['words']} words, {prior['fitted_at'][:19]} UTC"

    @admin.display(description="fitted ordinal model")
    def adaptive_model_text(self, obj: Study) -> str:
        model = adaptive_model_summary(obj)
        if not model:
            return "not fitted yet: the beta-binomial predicts until the first fit (refitted as tasks complete)"
        return (
            f"fitted to {model['annotations']} annotations by {model['participants']} participants, "
            f"{model['fitted_at'][:19]} UTC"
        )

    @admin.display(description="design check")
    def design_check_text(self, obj: Study) -> str:
        """Whether model allocation and the ordinal predictor may be chosen, and why (Study.design_check)."""
        check = obj.design_check or {}
        if not check:
            return (
                "None yet: model allocation and the ordinal predictor may be chosen only where the study designer's "
                "check, from a pilot of this study, says they beat the fixed design (Plan a study)."
            )
        lines = [
            f"{name}: {check[design]['reason']}" for design, (_, name, _) in CHECKED_DESIGNS.items() if design in check
        ]
        return f"Checked {check['checked_at'][:19]} UTC from {check['pilot_annotations']} annotations. " + " ".join(
            lines
        )

    @admin.display(description="chance of passing by guessing")
    def headphone_check_chance(self, obj: Study) -> str:
        """For the saved settings, at a third of the trials right by chance: each test's, and both's
        (a participant must pass each)."""
        if obj.pk is None:
            return "Shown once the study is saved."
        trials, tries = obj.headphone_check_trials, obj.headphone_check_tries
        parts, both = [], 1.0
        for test, label in (("huggins", "Huggins pitch"), ("antiphase", "antiphase")):
            mark = obj.headphone_pass_mark(test)
            chance = headphone_stimuli.guessing_chance(trials=trials, pass_mark=mark, tries=tries)
            parts.append(
                f"{label}: {mark} of {trials} right in {tries} tr{'y' if tries == 1 else 'ies'}: {_percent(chance)}"
            )
            both *= chance
        return f"{'; '.join(parts)}; both: {_percent(both)}."

    @admin.display(description="results")
    def headphone_check_results(self, obj: Study) -> str:
        if obj.pk is None:
            return "-"
        return render_to_string("admin/annotation/_headphone_results.html", {"results": headphone_results(study=obj)})

    def get_fieldsets(self, request, obj=None):
        if obj is None or obj.capabilities.answers_are_word_marks:
            return self.fieldsets
        return [
            (
                "Playback and sound check" if name == "Marking, playback and sound check" else name,
                {**options, "fields": [f for f in options["fields"] if f not in self.EMPHASIS_ONLY]},
            )
            for name, options in self.fieldsets
        ]

    def get_inlines(self, request, obj):
        if obj is not None and obj.capabilities.checks_are_items:
            return [PrerequisiteQuestionInline]  # no AttentionCheck clips: the checks are items of the study
        return self.inlines

    def get_urls(self):
        return [
            path("<int:pk>/topup/", self.admin_site.admin_view(self.topup_view), name="annotation_study_topup"),
            path(
                "<int:pk>/status/<str:status>/",
                self.admin_site.admin_view(require_POST(self.status_view)),
                name="annotation_study_status",
            ),
            *super().get_urls(),
        ]

    def get_queryset(self, request):
        return studies_with_counts(super().get_queryset(request))

    # -- creation -----------------------------------------------------------

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        # ?corpus=: the corpus page's "Create a study" button fills in its corpus
        initial = {"corpus": request.GET["corpus"]} if request.GET.get("corpus", "").isdigit() else None
        form = StudyCreateForm(request.POST or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            try:
                study = study_create(
                    name=form.cleaned_data["name"],
                    corpus=form.cleaned_data["corpus"],
                    selection=form.selection(),
                    **form.settings(),
                )
            except ValueError as error:
                form.add_error(None, str(error))
            else:
                items = study.items.count()
                messages.success(request, f"Created draft study {study.name!r} with {items} clip(s).")
                self._warn(request, study)
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
            # Sections that apps above add (annotation.page_extensions): prolific's growing of places.
            "sections": page_sections(page=STUDY_TOPUPS, request=request, obj=study),
        }
        return TemplateResponse(request, "admin/annotation/study/topup.html", context)

    # -- state changes from the study's page ---------------------------------

    def _warn(self, request, study) -> None:
        for warning in study_setting_warnings(study=study):
            self.message_user(request, f"{study.name}: {warning}", messages.WARNING)

    def response_change(self, request, obj):
        self._warn(request, obj)
        return super().response_change(request, obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        review_url = reverse("admin:annotation_studyitem_changelist") + mismatch_review_query(object_id)
        annotations_url = study_annotations_url(request, study_id=object_id)
        participants_url = None
        if request.user.has_perm("annotation.change_participant"):  # what the review page needs
            participants_url = reverse("admin:annotation_participant_review", args=[object_id])
        study = Study.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        extra_context = {
            "status_moves": self._status_moves(request, study) if study is not None else [],
            "mismatch_review_url": review_url,
            "annotations_url": annotations_url,
            "participant_review_url": participants_url,
            "raw_export_choices": [("no", "opaque ids only"), ("yes", "with Prolific ids")],
            **(extra_context or {}),
        }
        return super().change_view(request, object_id, form_url, extra_context)

    # -- state changes ------------------------------------------------------

    # The study page's buttons (and the list's actions) that move a study, by the status they set.
    STATUS_BUTTONS = {
        Status.LIVE: "Set live (hand out work)",
        Status.PAUSED: "Pause (stop handing out work)",
        Status.CLOSED: "Close",
        Status.DRAFT: "Back to draft",
    }

    def _status_moves(self, request, study: Study) -> list[tuple[str, str]]:
        """(status, button label) for each status the study can be set to from its own; what a
        move still lacks (consent text, attention checks) the button's answer says."""
        if not self.has_change_permission(request, study):
            return []
        return [
            (status, label)
            for status, label in self.STATUS_BUTTONS.items()
            if study.status in REACHABLE_FROM[status] and study.status != status
        ]

    def status_view(self, request, pk: int, status: str):
        """The study page's status buttons: the list's actions, for this one study."""
        study = get_study_for_staff(request, pk, perm="annotation.change_study")
        if status not in self.STATUS_BUTTONS:
            raise Http404(f"no study status {status!r}")
        self._move(request, Study.objects.filter(pk=study.pk), status)
        return redirect(reverse("admin:annotation_study_change", args=[study.pk]))

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
                if status == Status.LIVE:
                    self._warn(request, study)
        if moved:
            self.message_user(request, f"Set {status}: {', '.join(moved)}.", messages.SUCCESS)
        if refused:
            self.message_user(request, f"Not set {status}: {'; '.join(refused)}.", messages.WARNING)

    # -- read-only displays -------------------------------------------------

    @admin.display(description="clips", ordering="clip_count")
    def clip_count(self, study):
        return study.clip_count

    @admin.display(description="progress", ordering="annotations_done")
    def progress(self, study):
        """Annotations made against the target: every clip in the study times its target per clip."""
        if study.pk is None:
            return "-"
        clips, done = study.clip_count or 0, study.annotations_done or 0
        unit = (study.capabilities.answer_noun, study.capabilities.item_noun)
        target = clips * study.target_annotations
        if not target:
            return f"no {unit[1]}s yet"
        percent = min(100, int(100 * done / target))
        return (
            f"{done} of {target} {unit[0]}s ({percent} %): {study.target_annotations} per {unit[1]}, {clips} {unit[1]}s"
        )

    @admin.display(description="going live")
    def live_readiness(self, study):
        """What Set live would say now: the study's page shows it before the button is pressed."""
        if study.pk is None or study.status == Status.LIVE:
            return "-" if study.pk is None else "Live: handing out work."
        refusal = study_status_refusal(study=study, status=Status.LIVE)
        return f"Set live is refused: {refusal}." if refusal else "Ready: Set live hands out work."

    @admin.display(description="why not complete")
    def completion(self, study):
        """What the clips still lack and where it stands (annotation.selectors.study_shortfall)."""
        if study.pk is None:
            return "-"
        return shortfall_text(study_shortfall(study=study))

    @admin.display(description="attention checks passed")
    def attention_check_pass_rate(self, study):
        if study.pk is None:
            return "-"
        return attention_pass_text(study=study)

    @admin.display(description="participants", ordering="participants_total")
    def participants_total(self, study):
        return study.participants_total

    @admin.display(description="to review", ordering="clips_to_review")
    def clips_to_review(self, study):
        if not study.clips_to_review:
            return 0
        url = reverse("admin:annotation_studyitem_changelist") + mismatch_review_query(study.pk)
        return format_html('<a href="{}">{}</a>', url, study.clips_to_review)

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
