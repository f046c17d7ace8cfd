"""Detection runs in the admin: launched from a succeeded benchmark run and a target ("Run a
detector", a form), followed on their page while a GPU worker predicts, read there once finished.
Runs are written by the worker only: the admin never edits or deletes one.
modelzoo.services.detection_runs does every write; the pages only show and ask."""

from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from annotation.admin.base import PlatformModelAdmin
from annotation.models import Study
from annotation.shared.access import require_perm
from annotation.study_kinds import kinds_with
from evaluation.models import CastSet
from modelzoo.models import BenchmarkRun, DetectionRun
from modelzoo.services.detection_runs import DetectionRefused, detection_run_create

ADD = ("modelzoo.add_detectionrun", "modelzoo.view_benchmarkrun")  # a launch reads the run it loads
TARGET_PERMS = {"study": "annotation.view_study", "cast_set": "evaluation.view_castset"}  # and the clips it marks


def source_runs():
    """Runs with a trained detector whose binary predictions mean something (see source_run_check)."""
    succeeded = BenchmarkRun.objects.filter(status=BenchmarkRun.Status.SUCCEEDED).exclude(checkpoint="")
    return succeeded.exclude(label_mode=BenchmarkRun.LabelMode.SCALAR).select_related("label_set")


class DetectionRunForm(forms.Form):
    source_run = forms.ModelChoiceField(
        queryset=source_runs(), help_text="A succeeded benchmark run, trained in binary or both modes."
    )
    study = forms.ModelChoiceField(
        queryset=Study.objects.filter(kind__in=kinds_with("answers_are_choices")),
        required=False,
        label="Listening form (StressTest SSD)",
        help_text="Its stressed_words items' clips.",
    )
    cast_set = forms.ModelChoiceField(
        queryset=CastSet.objects.all(), required=False, label="or a CAST set", help_text="Its renditions' clips."
    )
    language = forms.CharField(
        required=False,
        max_length=35,
        help_text="The language of clips that have none, e.g. en (untimed English clips are aligned).",
    )

    def clean(self):
        cleaned = super().clean()
        if bool(cleaned.get("study")) == bool(cleaned.get("cast_set")):
            raise forms.ValidationError("Choose one target: a listening form or a CAST set.")
        return cleaned

    @property
    def target_field(self) -> str:
        return "study" if self.cleaned_data.get("study") else "cast_set"


@admin.register(DetectionRun)
class DetectionRunAdmin(PlatformModelAdmin):
    list_display = [
        "pk",
        "source",
        "target_label",
        "state",
        "outputs_count",
        "stressed_count",
        "system_link",
        "created_at",
    ]
    list_filter = ["status"]
    list_select_related = ["source_run__label_set", "study", "cast_set", "system"]
    fields = readonly_fields = [
        "source",
        "target_label",
        "language",
        "status",
        "phase",
        "error",
        "attempts",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
        "system_link",
        "outputs_count",
        "clips_count",
        "words_count",
        "stressed_count",
    ]

    def has_add_permission(self, request):
        return all(request.user.has_perm(perm) for perm in ADD)

    def has_change_permission(self, request, obj=None):
        return False  # written by the worker

    def has_delete_permission(self, request, obj=None):
        return False  # the record of the outputs it wrote

    def add_view(self, request, form_url="", extra_context=None):
        for perm in ADD:
            require_perm(request, perm)
        initial = {"source_run": request.GET["source_run"]} if request.GET.get("source_run") else None
        form = DetectionRunForm(request.POST or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            require_perm(request, TARGET_PERMS[form.target_field])
            try:
                run = detection_run_create(**form.cleaned_data, user=request.user)
            except DetectionRefused as refusal:
                form.add_error(None, str(refusal))
            else:
                messages.info(request, "The detector run is queued for a GPU worker.")
                return redirect(reverse("admin:modelzoo_detectionrun_change", args=[run.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Run a detector",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/modelzoo/detectionrun/add.html", context)

    @admin.display(description="detector", ordering="source_run")
    def source(self, run):
        url = reverse("admin:modelzoo_benchmarkrun_change", args=[run.source_run_id])
        return format_html('<a href="{}">{}</a>', url, run.source_run)

    @admin.display(description="target")
    def target_label(self, run):
        return run.target_label

    @admin.display(description="status", ordering="status")
    def state(self, run):
        if run.finished:
            return run.status
        progress = f"{run.phase} {run.done}/{run.total}" if run.total else run.phase or "waiting for a GPU worker"
        return f"{run.status}: {progress}"

    @admin.display(description="system")
    def system_link(self, run):
        return run.system.name if run.system else "-"
