"""Label sets in the admin: create one from studies, watch it build, read its sizes, agreement and
what was left out, then finalize, archive or export it. Every write goes through
evaluation.services.label_sets (and dataset_exports); the pages only show and ask."""

from django.contrib import admin, messages
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from annotation.admin.base import PlatformModelAdmin
from annotation.shared.access import require_perm
from annotation.views.job_progress import job_progress_response
from evaluation.access import get_label_set_for_staff
from evaluation.admin.dataset_imports import dataset_import_view
from evaluation.forms import LabelSetCreateForm
from evaluation.models import DatasetExport, LabelSet
from evaluation.services.dataset_export_cards import model_standing
from evaluation.services.dataset_exports import LABEL_SET_FORMATS
from evaluation.services.label_sets import (
    LabelSetRefused,
    label_set_archive,
    label_set_create,
    label_set_default_parameters,
    label_set_finalize,
)

# What a label set may be exported as (a study's raw annotations are exported from the API).


@admin.register(LabelSet)
class LabelSetAdmin(PlatformModelAdmin):
    list_display = [
        "__str__",
        "lifecycle",
        "status",
        "label_source",
        "label_kind",
        "clips",
        "created_at",
        "finalized_at",
    ]
    list_filter = ["lifecycle", "status", "label_source", "label_kind", "studies"]
    search_fields = ["name"]
    change_form_template = "admin/evaluation/labelset/change_form.html"
    fields = readonly_fields = [
        "name",
        "version",
        "studies",
        "lifecycle",
        "status",
        "label_source",
        "label_kind",
        "source",
        "parameters",
        "annotator_model",
        "model_standing",
        "checksum",
        "code_version",
        "created_by",
        "created_at",
        "finalized_by",
        "finalized_at",
    ]

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("import/", wrap(self.import_view), name="evaluation_labelset_import"),
            path("<int:pk>/progress/", wrap(self.progress_view), name="evaluation_labelset_progress"),
            path("<int:pk>/finalize/", wrap(require_POST(self.finalize_view)), name="evaluation_labelset_finalize"),
            path("<int:pk>/archive/", wrap(require_POST(self.archive_view)), name="evaluation_labelset_archive"),
            path("<int:pk>/export/", wrap(require_POST(self.export_view)), name="evaluation_labelset_export"),
            *super().get_urls(),
        ]

    def has_change_permission(self, request, obj=None):
        return False  # rows are built, never edited; finalize and archive are their own actions

    def has_delete_permission(self, request, obj=None):
        # A final set is kept for the results and exports made from it: archive it instead.
        return super().has_delete_permission(request, obj) and (obj is None or not obj.is_final)

    def get_actions(self, request):
        # No bulk delete: a selection could reach final sets; drafts are deleted one at a time. Only
        # what the floors above add (the model zoo's "Launch a benchmark").
        return self.actions_from_above(request)

    @admin.display(description="model labels against the majority")
    def model_standing(self, label_set):
        """Before a researcher uses the model's labels: how they fare against the majority's on
        the study's own annotations, and which the set recommends."""
        lines = model_standing(label_set.annotator_model or {})
        return next(iter(lines.values()), "-")

    @admin.display(description="clips")
    def clips(self, label_set):
        return label_set.summary.get("clips", "-")

    def add_view(self, request, form_url="", extra_context=None):
        require_perm(request, "evaluation.add_labelset")
        form = LabelSetCreateForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            studies = list(form.cleaned_data["studies"])
            try:
                parameters = label_set_default_parameters(studies=studies, **form.parameter_overrides())
                label_set = label_set_create(
                    name=form.cleaned_data["name"], studies=studies, parameters=parameters, user=request.user
                )
            except (ValueError, LabelSetRefused) as error:
                form.add_error(None, str(error))
            else:
                messages.info(request, f"{label_set} is queued; this page shows its build.")
                return redirect(reverse("admin:evaluation_labelset_change", args=[label_set.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Make a label set",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/evaluation/labelset/add.html", context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        context = {
            "can_finalize": request.user.has_perm("evaluation.change_labelset"),
            "can_export": request.user.has_perm("evaluation.add_datasetexport"),
            "export_formats": [(value, DatasetExport.Format(value).label) for value in LABEL_SET_FORMATS],
        }
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **context})

    def import_view(self, request):
        return dataset_import_view(self, request)

    def progress_view(self, request, pk: int):
        label_set = get_label_set_for_staff(request, pk, perm="evaluation.view_labelset")
        return job_progress_response(request, label_set, template="admin/evaluation/labelset/change_form.html#build")

    def finalize_view(self, request, pk: int):
        return self._act(request, pk, label_set_finalize, "finalized: its rows are frozen")

    def archive_view(self, request, pk: int):
        return self._act(request, pk, label_set_archive, "archived")

    def export_view(self, request, pk: int):
        from evaluation.services.dataset_exports import ExportRefused, dataset_export_request

        label_set = get_label_set_for_staff(request, pk, perm="evaluation.view_labelset")
        require_perm(request, "evaluation.add_datasetexport")
        try:
            export = dataset_export_request(
                format=request.POST.get("format", ""), label_set=label_set, user=request.user
            )
        except ExportRefused as error:
            messages.error(request, str(error))
            return redirect(reverse("admin:evaluation_labelset_change", args=[pk]))
        return redirect(reverse("admin:evaluation_datasetexport_change", args=[export.pk]))

    def _act(self, request, pk, action, done: str):
        label_set = get_label_set_for_staff(request, pk, perm="evaluation.change_labelset")
        try:
            if action is label_set_finalize:
                label_set = action(label_set=label_set, user=request.user)
            else:
                label_set = action(label_set=label_set)
        except LabelSetRefused as error:
            messages.error(request, str(error))
        else:
            messages.success(request, f"{label_set} {done}.")
        return redirect(reverse("admin:evaluation_labelset_change", args=[pk]))
