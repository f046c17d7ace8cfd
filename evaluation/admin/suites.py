"""Benchmark suites in the admin: read-only lists of the systems and what they gave. Rows are
written by the imports (import_system_outputs, import_cast_items, the API), never edited here."""

from django.contrib import admin
from django.db.models import Count
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.admin.base import PlatformModelAdmin
from evaluation.models import CastItem, CastRendition, CastSet, SuiteReport, System, SystemOutput
from evaluation.views import suite_reports as suite_views


class ReadOnlyAdmin(PlatformModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # an import with --replace replaces a system's outputs


@admin.register(System)
class SystemAdmin(ReadOnlyAdmin):
    list_display = ["name", "version", "kind", "answers", "renditions_count", "created_at"]
    list_filter = ["kind"]
    search_fields = ["name"]
    fields = readonly_fields = ["name", "version", "kind", "metadata", "created_at"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(answer_count=Count("outputs", distinct=True), rendition_count=Count("renditions", distinct=True))
        )

    @admin.display(description="answers", ordering="answer_count")
    def answers(self, system):
        return system.answer_count

    @admin.display(description="renditions", ordering="rendition_count")
    def renditions_count(self, system):
        return system.rendition_count


@admin.register(SystemOutput)
class SystemOutputAdmin(ReadOnlyAdmin):
    list_display = ["system", "suite", "form_item", "pole_order", "raw", "line"]
    list_filter = ["suite", "system", "form_item__study"]
    search_fields = ["form_item__external_id", "system__name"]
    list_select_related = ["system", "form_item"]
    fields = readonly_fields = ["system", "suite", "form_item", "pole_order", "raw", "line", "created_at"]


@admin.register(CastSet)
class CastSetAdmin(ReadOnlyAdmin):
    list_display = ["name", "items_count", "corpus", "scores", "created_at"]
    search_fields = ["name"]
    fields = readonly_fields = ["name", "description", "corpus", "scores", "created_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(item_count=Count("items"))

    @admin.display(description="items", ordering="item_count")
    def items_count(self, cast_set):
        return cast_set.item_count

    @admin.display(description="CAST scores")
    def scores(self, cast_set):
        url = reverse("admin:evaluation_suitereport_page", kwargs={"suite": "cast", "pk": cast_set.pk})
        return format_html('<a href="{}">Hit, Pair-Contrast, Pair-Correct</a>', url)


@admin.register(CastItem)
class CastItemAdmin(ReadOnlyAdmin):
    list_display = ["external_id", "cast_set", "sentence", "word_a", "word_b"]
    list_filter = ["cast_set"]
    search_fields = ["external_id", "sentence"]
    list_select_related = ["cast_set"]
    fields = readonly_fields = [
        "cast_set",
        "external_id",
        "sentence",
        "words",
        "context_a",
        "context_b",
        "word_a",
        "word_b",
        "metadata",
    ]


@admin.register(CastRendition)
class CastRenditionAdmin(ReadOnlyAdmin):
    list_display = ["item", "system", "side", "mode", "clip", "line"]
    list_filter = ["system", "side", "mode", "item__cast_set"]
    search_fields = ["item__external_id", "system__name"]
    list_select_related = ["item", "system", "clip"]
    fields = readonly_fields = ["item", "system", "side", "mode", "clip", "line"]


@admin.register(SuiteReport)
class SuiteReportAdmin(ReadOnlyAdmin):
    """The scores of the suites; computed from each suite's page (linked from the study's admin page
    and from the CAST set list)."""

    list_display = ["suite", "subject", "status", "created_at", "finished_at", "open_link"]
    list_filter = ["suite", "status"]
    list_select_related = ["study", "cast_set"]
    fields = readonly_fields = [
        "suite",
        "study",
        "cast_set",
        "resamples",
        "seed",
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
        page = "<str:suite>/<int:pk>/"
        return [
            path(
                "reports/<int:report_id>/progress/",
                wrap(suite_views.suite_report_progress),
                name="evaluation_suitereport_progress",
            ),
            path(page, wrap(suite_views.suite_report), site, name="evaluation_suitereport_page"),
            path(
                page + "scores.csv",
                wrap(suite_views.suite_report_download),
                {"kind": "csv"},
                name="evaluation_suitereport_csv",
            ),
            path(
                page + "scores.json",
                wrap(suite_views.suite_report_download),
                {"kind": "json"},
                name="evaluation_suitereport_json",
            ),
            *super().get_urls(),
        ]

    @admin.display(description="of")
    def subject(self, report):
        return report.study or report.cast_set

    @admin.display(description="scores")
    def open_link(self, report):
        pk = report.cast_set_id if report.suite == SuiteReport.Suite.CAST else report.study_id
        url = reverse("admin:evaluation_suitereport_page", kwargs={"suite": report.suite, "pk": pk})
        return format_html('<a href="{}">open</a>', url)
