"""Dataset exports in the admin: a read-only list with status, progress and download links, and
a page per export that follows its build. Exports are asked for from a label set's page, a study's
raw export from the study's page (or the API, or manage.py labelset_export);
evaluation.services.dataset_exports does every write."""

from django.contrib import admin, messages
from django.shortcuts import redirect
from django.template.defaultfilters import filesizeformat
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from annotation.admin.base import PlatformModelAdmin
from annotation.shared.access import get_study_for_staff, require_perm
from annotation.views.job_progress import job_progress_response
from evaluation.access import export_read_perms, get_export_for_staff, may_download_export
from evaluation.models import DatasetExport
from evaluation.views import dataset_exports as views


@admin.register(DatasetExport)
class DatasetExportAdmin(PlatformModelAdmin):
    list_display = [
        "__str__",
        "format",
        "status",
        "progress_text",
        "size_text",
        "created_by",
        "created_at",
        "download_link",
    ]
    list_filter = ["status", "format"]
    list_select_related = ["label_set", "study", "created_by"]
    fields = readonly_fields = [
        "format",
        "label_set",
        "study",
        "include_prolific_ids",
        "status",
        "phase",
        "done",
        "total",
        "error",
        "file_name",
        "size",
        "sha256",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
    ]
    change_form_template = "admin/evaluation/datasetexport/change_form.html"

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<int:pk>/progress/", wrap(self.progress_view), name="evaluation_datasetexport_progress"),
            path("<int:pk>/download/", wrap(views.export_link), name="evaluation_datasetexport_download"),
            path("study/<int:study_id>/raw/", wrap(self.raw_export_view), name="evaluation_datasetexport_raw"),
            *super().get_urls(),
        ]

    def has_add_permission(self, request):
        return False  # asked for from a label set's or a study's page, the API or manage.py labelset_export

    @method_decorator(require_POST)
    def raw_export_view(self, request, study_id: int):
        """A study's raw export (every submitted annotation and every participant), from the study's
        page: asking needs what the API asks (evaluation.access.export_read_perms)."""
        from evaluation.services.dataset_exports import ExportRefused, dataset_export_request  # as the label set's

        study = get_study_for_staff(request, study_id, perm="evaluation.add_datasetexport")
        with_ids = request.POST.get("prolific_ids") == "yes"
        for perm in export_read_perms(label_set=False, study=True, include_prolific_ids=with_ids):
            require_perm(request, perm)
        try:
            export = dataset_export_request(
                format=DatasetExport.Format.RAW, study=study, include_prolific_ids=with_ids, user=request.user
            )
        except ExportRefused as error:
            messages.error(request, str(error))
            return redirect(reverse("admin:annotation_study_change", args=[study.pk]))
        return redirect(reverse("admin:evaluation_datasetexport_change", args=[export.pk]))

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # deleting the row would leave its zip in storage

    def change_view(self, request, object_id, form_url="", extra_context=None):
        export = self.get_object(request, object_id)
        context = {"can_download": export is not None and may_download_export(request.user, export)}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **context})

    def progress_view(self, request, pk: int):
        export = get_export_for_staff(request, pk, perm="evaluation.view_datasetexport")
        template = "admin/evaluation/datasetexport/change_form.html#progress"
        context = {"can_download": may_download_export(request.user, export)}
        return job_progress_response(request, export, template=template, context=context)

    @admin.display(description="progress")
    def progress_text(self, export):
        return f"{export.phase} {export.done}/{export.total}" if export.total else export.phase or "-"

    @admin.display(description="size")
    def size_text(self, export):
        return filesizeformat(export.size) if export.size else "-"

    @admin.display(description="download")
    def download_link(self, export):
        if export.status != DatasetExport.Status.SUCCEEDED:
            return "-"
        url = reverse("admin:evaluation_datasetexport_download", args=[export.pk])
        return format_html('<a href="{}">{}</a>', url, export.file_name)
