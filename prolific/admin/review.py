"""Participants, and the per-study review page: quality, flags, decisions, export, sending to Prolific.

Every review URL needs change_participant; staff without it get 403. Sending to Prolific queues a
background job (prolific.services.send); the page polls its progress and shows its outcome.
"""

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.admin.annotations import study_annotations_url
from annotation.admin.base import PlatformModelAdmin
from annotation.models import Participant, Study
from annotation.participant_names import participant_annotator_id, participant_display_name, sees_prolific_ids
from annotation.selectors.review import participant_review_rows
from annotation.services.review import (
    MIN_REJECTION_MESSAGE,
    REJECTION_CATEGORIES,
    approved_prolific_ids,
    participants_decide,
)
from annotation.shared.access import get_study_for_review
from annotation.shared.downloads import attachment
from annotation.views.job_progress import job_progress_response
from prolific.access import get_prolific_send_job_for_review
from prolific.client import ProlificClient
from prolific.services.send import prolific_decisions_send_create, prolific_decisions_send_latest

RETURN_REASONS = ["Didn't finish the study", "Encountered technical problems", "Withdrew consent"]


class ReviewDecisionForm(forms.Form):
    participants = forms.ModelMultipleChoiceField(queryset=Participant.objects.none())
    decision = forms.ChoiceField(choices=Participant.Decision.choices)
    rejection_category = forms.ChoiceField(
        choices=[("", "---------"), *REJECTION_CATEGORIES.items()], required=False, label="Rejection reason"
    )
    rejection_message = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        required=False,
        help_text=f"Shown to the participant; at least {MIN_REJECTION_MESSAGE} characters.",
    )
    return_reason = forms.CharField(
        required=False, max_length=300, widget=forms.TextInput(attrs={"list": "return-reasons", "size": 40})
    )

    def __init__(self, *args, study: Study, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["participants"].queryset = Participant.objects.filter(study=study)
        self.fields["participants"].error_messages["required"] = "Tick the participants to decide on."

    def note(self) -> str:
        decision = self.cleaned_data["decision"]
        if decision == Participant.Decision.REJECTED:
            return self.cleaned_data["rejection_message"]
        if decision == Participant.Decision.RETURN_REQUESTED:
            return self.cleaned_data["return_reason"]
        return ""


PROLIFIC_FIELDS = {"prolific_pid", "prolific_study_id", "prolific_session_id"}
# The resume link's key: whoever has it answers as the participant. Never shown.
NEVER_SHOWN = {"access_key"}


@admin.register(Participant)
class ParticipantAdmin(PlatformModelAdmin):
    list_display = [
        "annotator_id",
        "display_name",
        "study",
        "decision",
        "completed_at",
        "decision_sent_at",
        "review_link",
    ]
    list_filter = ["study", "decision", "screened_out"]
    # Searched only by who sees Prolific ids (get_search_fields): never declared for everyone
    # (annotation.admin.base), else the search would answer for ids the list hides.
    prolific_search_fields = ["prolific_pid", "prolific_session_id"]
    list_select_related = ["study"]
    change_list_template = "admin/annotation/participant/change_list.html"

    def has_add_permission(self, request):
        return False  # participants arrive through the study link

    def get_readonly_fields(self, request, obj=None):
        return self.get_fields(request, obj)  # decisions go through the review page

    # Prolific ids (the display name, the study link's ids) only for who holds the participant
    # permission (annotation.participant_names); everyone else knows participants by annotator id.
    def get_fields(self, request, obj=None):
        fields = [field.name for field in self.model._meta.fields if field.name not in NEVER_SHOWN]
        return fields if sees_prolific_ids(request.user) else [f for f in fields if f not in PROLIFIC_FIELDS]

    def get_list_display(self, request):
        shown = super().get_list_display(request)
        return shown if sees_prolific_ids(request.user) else [column for column in shown if column != "display_name"]

    def get_search_fields(self, request):
        return self.prolific_search_fields if sees_prolific_ids(request.user) else []

    def get_urls(self):
        view, prefix = self.admin_site.admin_view, "review/<int:study_id>/"
        return [
            path(prefix, view(self.review_view), name="annotation_participant_review"),
            path(prefix + "approved.txt", view(self.approved_ids_view), name="annotation_participant_approved_ids"),
            path(prefix + "send/", view(self.send_view), name="annotation_participant_send"),
            path(
                "review/sends/<int:pk>/progress/",
                view(self.send_progress_view),
                name="annotation_participant_send_progress",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        study_id = request.GET.get("study__id__exact", "")
        study = Study.objects.filter(pk=study_id).first() if study_id.isdigit() else None
        extra_context = {**(extra_context or {}), "review_study": study}
        return super().changelist_view(request, extra_context)

    @admin.display(description="annotator id")
    def annotator_id(self, participant):
        """The opaque id the study's reports, label sets and exports name the participant by."""
        return participant_annotator_id(
            study_slug=participant.study.slug, participant_pk=participant.pk, prolific_pid=participant.prolific_pid
        )

    @admin.display(description="participant")
    def display_name(self, participant):
        return participant_display_name(participant_pk=participant.pk, prolific_pid=participant.prolific_pid)

    @admin.display(description="review")
    def review_link(self, participant):
        url = reverse("admin:annotation_participant_review", args=[participant.study_id])
        return format_html('<a href="{}">review study</a>', url)

    def review_view(self, request, study_id: int):
        study = get_study_for_review(request, study_id)
        form = ReviewDecisionForm(request.POST or None, study=study)
        if request.method == "POST" and form.is_valid():
            decided = list(form.cleaned_data["participants"])
            try:
                participants_decide(
                    participants=decided,
                    decision=form.cleaned_data["decision"],
                    note=form.note(),
                    category=form.cleaned_data["rejection_category"],
                )
            except ValueError as error:
                form.add_error(None, str(error))
            else:
                label = Participant.Decision(form.cleaned_data["decision"]).label
                messages.success(request, f"{label}: {', '.join(map(str, decided))}.")
                return redirect(request.path)
        context = self._review_context(request, study, form)
        return TemplateResponse(request, "admin/annotation/participant/review.html", context)

    def approved_ids_view(self, request, study_id: int):
        study = get_study_for_review(request, study_id)
        ids = approved_prolific_ids(study=study)
        body = "".join(f"{pid}\n" for pid in ids)
        filename = f"{study.slug}-approved-prolific-ids.txt"
        return attachment(body, filename=filename, content_type="text/plain; charset=utf-8")

    def send_view(self, request, study_id: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        study = get_study_for_review(request, study_id)
        if ProlificClient.from_settings() is None:
            messages.error(request, "PROLIFIC_API_TOKEN is not set: nothing was sent.")
        else:
            prolific_decisions_send_create(study=study, user=request.user)
        return redirect("admin:annotation_participant_review", study_id=study.pk)

    def send_progress_view(self, request, pk: int):
        job = get_prolific_send_job_for_review(request, pk)
        template = "admin/annotation/participant/review.html#prolific_send"
        return job_progress_response(request, job, template=template, context={"send_job": job})

    def _review_context(self, request, study: Study, form: ReviewDecisionForm) -> dict:
        everyone = participant_review_rows(study=study)
        # Entrants never given a task (screened out, failed the sound check, left before the
        # task) have no work to decide on: listed apart, below.
        rows = [row for row in everyone if row.had_task]
        return {
            **self.admin_site.each_context(request),
            "title": f"Review participants: {study}",
            "opts": self.model._meta,
            "study": study,
            "rows": rows,
            "entrants_without_task": [row for row in everyone if not row.had_task],
            "form": form,
            "selected": {str(pk) for pk in form["participants"].value() or []},
            "return_reasons": RETURN_REASONS,
            "flagged": sum(1 for row in rows if row.flags),
            "unsent": sum(1 for row in everyone if _unsent(row)),
            "prolific_enabled": ProlificClient.from_settings() is not None,
            "send_job": prolific_decisions_send_latest(study=study),
            "annotations_url": study_annotations_url(request, study_id=study.pk),
        }


def _unsent(row) -> bool:
    return row.decision != Participant.Decision.PENDING and not row.decision_sent_at
