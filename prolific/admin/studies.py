"""A study on Prolific in the admin: proposed from ours (open it from the study's page), its cost
previewed, then created, published, paused, resumed, stopped, grown and refreshed with the buttons
of its page, each a background job whose progress the page follows. Participant groups are listed
read-only; they are made and filled from a study's page ("Add to a participant group")."""

from django import forms
from django.contrib import admin, messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.admin.base import PlatformModelAdmin
from annotation.models import Study
from annotation.page_extensions import STUDY_TOPUPS, object_tools_add, page_section_add
from annotation.shared.access import require_perm
from annotation.views.job_progress import job_progress_response
from prolific.models import ProlificParticipantGroup, ProlificStudy, ProlificStudyJob
from prolific.selectors.bonuses import bonuses_paid_cents
from prolific.services import costs as prolific_costs
from prolific.services.studies import (
    ACTIONS,
    EDITABLE_WHILE_RUNNING,
    GROUP_MEMBERS,
    RESEARCHER_FIELDS,
    prolific_study_propose,
)
from prolific.services.study_jobs import JobBusy, prolific_study_job_create, prolific_study_job_latest

Action = ProlificStudyJob.Action
TEMPLATE = "admin/prolific/prolificstudy/change_form.html"
PROPOSED = [
    "name", "description", "estimated_minutes", "hourly_rate_cents", "reward_cents", "places", "device_compatibility",
    "peripheral_requirements", "language", "education",
]  # fmt: skip


class ProlificStudyForm(forms.ModelForm):
    class Meta:
        model = ProlificStudy
        fields = RESEARCHER_FIELDS

    def clean(self):
        cleaned = super().clean()
        for name in ("device_compatibility", "peripheral_requirements", "education"):
            value = cleaned.get(name)
            if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                self.add_error(name, 'Give a list of names in JSON, e.g. ["desktop"].')
        ceiling, places = cleaned.get("places_ceiling"), cleaned.get("places")
        if ceiling is not None and places is not None and ceiling < places:
            self.add_error("places_ceiling", f"The ceiling must be at least the {places} places to start with.")
        low, high = cleaned.get("approval_rate_min"), cleaned.get("approval_rate_max")
        if low is not None and high is not None and low > high:
            self.add_error("approval_rate_min", "The lowest approval rate must not be above the highest.")
        return cleaned


# The study's Prolific page (or the page proposing one) among the links of the study's admin page,
# which is annotation's, a floor below.
object_tools_add(model="annotation.study", template="admin/prolific/prolificstudy/_study_tools.html")


def _topup_grow_context(request, study) -> dict | None:
    """The top-ups page's growing of places on Prolific: once the study is on Prolific, for whoever
    may change its Prolific side."""
    prolific_study = getattr(study, "prolific", None)  # RelatedObjectDoesNotExist is an AttributeError
    if prolific_study is None or not prolific_study.created_on_prolific:
        return None
    return {"prolific_study": prolific_study} if request.user.has_perm("prolific.change_prolificstudy") else None


page_section_add(
    page=STUDY_TOPUPS, template="admin/prolific/prolificstudy/_topup_grow.html", context=_topup_grow_context
)


@admin.register(ProlificStudy)
class ProlificStudyAdmin(PlatformModelAdmin):
    form = ProlificStudyForm
    change_form_template = TEMPLATE
    list_display = ["study", "prolific_id", "status", "places", "total_available_places", "auto_grow", "synced_at"]
    list_filter = ["status"]
    list_select_related = ["study"]
    fieldsets = [
        (None, {"fields": ["study", "prolific_id", "status", "synced_at"]}),
        ("What participants see", {"fields": ["name", "description", "estimated_minutes"]}),
        ("Pay and places", {"fields": ["hourly_rate_cents", "reward_cents", "places", "places_ceiling", "auto_grow"]}),
        ("Requirements", {"fields": ["device_compatibility", "peripheral_requirements"]}),
        (
            "Screeners (MMEE's by default)",
            {
                "fields": [
                    "language",
                    ("approval_rate_min", "approval_rate_max"),
                    "approvals_min",
                    "education",
                    "no_hearing_difficulties",
                    "no_literacy_difficulties",
                    "exclude_group",
                ]
            },
        ),
        (
            "Completion codes and costs",
            {
                "fields": [
                    "completion_codes_text",
                    "screen_out_reward_cents",
                    "screen_out_slots",
                    "attention_failed_code",
                    "bonus_budget_cents",
                    "cost_preview",
                    "cost_so_far",
                    "total_available_places",
                ]
            },
        ),
    ]

    def get_readonly_fields(self, request, obj=None):
        shown = ["prolific_id", "status", "synced_at", "completion_codes_text", "cost_preview", "cost_so_far"]
        shown.append("total_available_places")
        if obj is not None:
            shown.append("study")
        if obj is not None and obj.created_on_prolific:
            # Prolific keeps what it was created with; only our own settings change from here.
            editable = EDITABLE_WHILE_RUNNING
            shown += [
                f.name for f in self.model._meta.fields if f.editable and f.name not in editable and f.name != "id"
            ]
        return list(dict.fromkeys(shown))

    def get_changeform_initial_data(self, request):
        initial = super().get_changeform_initial_data(request)
        study_id = request.GET.get("study")
        if study_id and study_id.isdigit():
            study = get_object_or_404(Study, pk=study_id)
            proposal = prolific_study_propose(study=study)
            initial.update({name: getattr(proposal, name) for name in PROPOSED}, study=study.pk)
        return initial

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<int:pk>/act/", wrap(self.act_view), name="prolific_prolificstudy_act"),
            path("<int:pk>/progress/", wrap(self.progress_view), name="prolific_prolificstudy_progress"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        prolific_study = self.get_object(request, object_id)
        context = {}
        if prolific_study is not None:
            context = {
                "job": prolific_study_job_latest(prolific_study=prolific_study),
                "buttons": self._buttons(request, prolific_study),
                "group_members": list(GROUP_MEMBERS.items()),
                "groups": ProlificParticipantGroup.objects.all(),
            }
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **context})

    def _buttons(self, request, prolific_study) -> list[tuple[str, str]]:
        if not self.has_change_permission(request, prolific_study):
            return []
        if not prolific_study.created_on_prolific:
            return [(Action.CREATE, "Create the draft on Prolific")]
        buttons = [
            (name, Action(name).label) for name, (_, allowed) in ACTIONS.items() if prolific_study.status in allowed
        ]
        buttons.append((Action.GROW, "Grow places now"))
        buttons.append((Action.SYNC, "Refresh from Prolific"))
        return buttons

    def act_view(self, request, pk: int):
        if request.method != "POST":
            return redirect(reverse("admin:prolific_prolificstudy_change", args=[pk]))
        require_perm(request, "prolific.change_prolificstudy")
        prolific_study = get_object_or_404(ProlificStudy, pk=pk)
        action = request.POST.get("action", "")
        params = {"site_url": request.build_absolute_uri("/")}
        if action == Action.GROUP:
            params |= self._group_params(request)
        if action not in Action.values or params.get("members") == "":
            messages.error(request, f"Unknown action {action!r}, or no participants chosen.")
        else:
            try:
                prolific_study_job_create(prolific_study=prolific_study, action=action, user=request.user, **params)
            except JobBusy as busy:
                messages.warning(request, f"{busy.job.get_action_display()} is still under way; try again after it.")
        return redirect(reverse("admin:prolific_prolificstudy_change", args=[pk]))

    def _group_params(self, request) -> dict:
        members = request.POST.get("members", "")
        group_id = request.POST.get("group", "")
        group = ProlificParticipantGroup.objects.filter(pk=group_id).first() if group_id.isdigit() else None
        return {
            "members": members if members in GROUP_MEMBERS else "",
            "group": group,
            "group_name": request.POST.get("group_name", "").strip()[:200],
        }

    def progress_view(self, request, pk: int):
        require_perm(request, ("prolific.view_prolificstudy", "prolific.change_prolificstudy"))
        prolific_study = get_object_or_404(ProlificStudy, pk=pk)
        job = prolific_study_job_latest(prolific_study=prolific_study)
        return job_progress_response(
            request, job, template=f"{TEMPLATE}#progress", context={"original": prolific_study}
        )

    @admin.display(description="completion codes")
    def completion_codes_text(self, prolific_study):
        if not prolific_study.study_id:
            return "Made when the draft is created: completed, screened out, failed attention check."
        study = prolific_study.study
        return format_html(
            "{} completed (reviewed by us); {} screened out (a fixed payment); {} failed an attention check (reviewed)",
            study.completion_code,
            study.screen_out_code,
            prolific_study.attention_failed_code,
        )

    @admin.display(description="cost preview")
    def cost_preview(self, prolific_study):
        if prolific_study.reward_cents is None or prolific_study.places is None:
            return "-"
        ceiling = prolific_study.places_ceiling
        text = _cost_line(prolific_costs.prolific_cost_preview(prolific_study), prolific_study)
        if ceiling and ceiling > prolific_study.places:
            grown = prolific_costs.prolific_cost_preview(prolific_study, places=ceiling)
            text += f"; grown to the ceiling of {ceiling} places: {prolific_costs.money(grown.total)}"
        return text

    @admin.display(description="cost so far")
    def cost_so_far(self, prolific_study):
        if not prolific_study.pk or not prolific_study.created_on_prolific:
            return "Nothing yet: not on Prolific."
        paid = bonuses_paid_cents(study=prolific_study.study)  # the bonus batches paid (prolific.selectors.bonuses)
        return _cost_line(prolific_costs.prolific_cost_so_far(prolific_study, bonuses_paid=paid), prolific_study)


def _cost_line(cost, prolific_study) -> str:
    money = prolific_costs.money
    return (
        f"rewards {money(cost.rewards)} + screen-outs {money(cost.screen_outs)} + bonuses {money(cost.bonuses)} "
        f"+ Prolific's fee {cost.fee_rate:.1%} {money(cost.fee)} = {money(cost.total, prolific_study.study.reward_currency)}"
    )


@admin.register(ProlificParticipantGroup)
class ProlificParticipantGroupAdmin(PlatformModelAdmin):
    list_display = ["name", "prolific_id", "source_study", "participant_count", "created_at"]
    fields = readonly_fields = ["name", "prolific_id", "source_study", "participant_count", "created_at"]

    def has_add_permission(self, request):
        return False  # made on Prolific from a study's page


@admin.register(ProlificStudyJob)
class ProlificStudyJobAdmin(PlatformModelAdmin):
    list_display = ["prolific_study", "action", "status", "outcome", "created_by", "created_at"]
    list_filter = ["action", "status"]
    fields = readonly_fields = ["prolific_study", "action", "status", "outcome", "error", "created_by", "created_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
