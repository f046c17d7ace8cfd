from django.contrib import admin
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.admin.base import PlatformModelAdmin
from annotation.models import Study
from annotation.study_kinds import kinds_with
from evaluation.forms import parameters_query
from evaluation.models import AgreementReport, ListeningFormReport
from evaluation.services.agreement_reports import parameters_from_dict
from evaluation.views import agreement_drilldown as drilldown_views
from evaluation.views import agreement_reports as views
from evaluation.views import listening_form_reports as form_views
from evaluation.views import study_designs as design_views


@admin.register(AgreementReport)
class AgreementReportAdmin(PlatformModelAdmin):
    """Reports are computed from the report page of a study (linked from this list), never edited."""

    list_display = ["study", "scope", "status", "progress_text", "created_at", "finished_at", "open_link"]
    list_filter = ["status", "study"]
    fields = readonly_fields = [
        "study",
        "language",
        "parameters",
        "fingerprint",
        "status",
        "phase",
        "done",
        "total",
        "error",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
    ]
    change_list_template = "evaluation/agreementreport_change_list.html"

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path(
                "study/<int:study_id>/",
                wrap(views.agreement_report_page),
                {"admin_site": self.admin_site},
                name="evaluation_agreementreport_study",
            ),
            path(
                "study/<int:study_id>/design/",
                wrap(design_views.study_design_page),
                {"admin_site": self.admin_site},
                name="evaluation_agreementreport_design",
            ),
            path(
                "study/<int:study_id>/clip/<str:clip>/",
                wrap(drilldown_views.agreement_report_clip),
                {"admin_site": self.admin_site},
                name="evaluation_agreementreport_clip",
            ),
            path(
                "<int:pk>/progress/", wrap(views.agreement_report_progress), name="evaluation_agreementreport_progress"
            ),
            path(
                "<int:pk>/report.json",
                wrap(views.agreement_report_download),
                {"kind": "json"},
                name="evaluation_agreementreport_json",
            ),
            path(
                "<int:pk>/report.csv",
                wrap(views.agreement_report_download),
                {"kind": "csv"},
                name="evaluation_agreementreport_csv",
            ),
            *super().get_urls(),
        ]

    def has_add_permission(self, request):
        return False  # reports are started from a study's report page (needs evaluation.add_agreementreport)

    def has_change_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        studies = [
            (study, reverse("admin:evaluation_agreementreport_study", args=[study.pk]))
            for study in Study.objects.filter(kind__in=kinds_with("answers_are_word_marks")).order_by("name")
        ]
        return super().changelist_view(request, {**(extra_context or {}), "studies": studies})

    @admin.display(description="scope")
    def scope(self, report):
        return report.language or "all languages"

    @admin.display(description="progress")
    def progress_text(self, report):
        return f"{report.phase} {report.done}/{report.total}" if report.total else report.phase or "-"

    @admin.display(description="report")
    def open_link(self, report):
        url = reverse("admin:evaluation_agreementreport_study", args=[report.study_id])
        return format_html('<a href="{}?{}">open</a>', url, parameters_query(parameters_from_dict(report.parameters)))


@admin.register(ListeningFormReport)
class ListeningFormReportAdmin(PlatformModelAdmin):
    """The scores of listening-form studies; each study's score page (linked from the study's admin
    page) computes them in the background, so rows are never added or edited here."""

    list_display = ["study", "status", "created_at", "finished_at", "open_link"]
    list_filter = ["status", "study"]
    fields = readonly_fields = [
        "study",
        "status",
        "phase",
        "done",
        "total",
        "error",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
    ]

    def get_urls(self):
        wrap, site = self.admin_site.admin_view, {"admin_site": self.admin_site}
        study = "study/<int:study_id>/"
        return [
            path(study, wrap(form_views.listening_form_report), site, name="evaluation_listeningformreport_study"),
            path(
                "<int:pk>/progress/",
                wrap(form_views.listening_form_report_progress),
                name="evaluation_listeningformreport_progress",
            ),
            path(
                study + "scores.csv",
                wrap(form_views.listening_form_report_download),
                {"kind": "csv"},
                name="evaluation_listeningformreport_csv",
            ),
            path(
                study + "scores.json",
                wrap(form_views.listening_form_report_download),
                {"kind": "json"},
                name="evaluation_listeningformreport_json",
            ),
            *super().get_urls(),
        ]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="scores")
    def open_link(self, report):
        url = reverse("admin:evaluation_listeningformreport_study", args=[report.study_id])
        return format_html('<a href="{}">open</a>', url)
