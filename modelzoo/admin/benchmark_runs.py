"""Benchmark runs in the admin: launched from a final label set ("Launch a benchmark", a form),
followed on their page while a GPU worker trains (progress, log, cancel), read there once finished,
and compared side by side from the list. Runs are written by the worker only: the admin never
edits or deletes one. modelzoo.services.benchmark_runs does every write; the pages only show and ask.
"""

from django.contrib import admin, messages
from django.shortcuts import redirect
from django.template.defaultfilters import filesizeformat
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.admin.base import PlatformModelAdmin
from annotation.page_extensions import list_action_add, object_tools_add
from annotation.shared.access import require_perm
from evaluation.models import LabelSet
from modelzoo.forms import BenchmarkLaunchForm
from modelzoo.models import BenchmarkRun
from modelzoo.results import MEASURE_NAMES
from modelzoo.services.benchmark_runs import BenchmarkRefused, benchmark_run_cancel, benchmark_runs_launch
from modelzoo.views import benchmark_results, benchmark_runs

ADD = ("modelzoo.add_benchmarkrun", "evaluation.view_labelset")  # a launch reads the set it trains on


@admin.action(description="Launch a benchmark")
def launch_benchmark(modeladmin, request, queryset):
    """On to the launch form, with the (one) selected final set filled in: an action of the label set
    list (evaluation's), which names nothing of the model zoo, a floor above it."""
    chosen = list(queryset.filter(lifecycle__in=(LabelSet.Lifecycle.FINAL, LabelSet.Lifecycle.ARCHIVED))[:2])
    if len(chosen) != 1:
        messages.error(request, "Select one final label set to benchmark (a second one is chosen in the form).")
        return None
    return redirect(f"{reverse('admin:modelzoo_benchmarkrun_add')}?label_set={chosen[0].pk}")


list_action_add(model="evaluation.labelset", action=launch_benchmark, permissions=ADD)
# The same, as a button on a final set's page.
object_tools_add(model="evaluation.labelset", template="admin/modelzoo/benchmarkrun/_label_set_tools.html")


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(PlatformModelAdmin):
    # The choices' short values, not their long labels: the list stays one line a run.
    list_display = [
        "pk",
        "label_set",
        "detector_name",
        "mode",
        "setting_label",
        "state",
        "headline",
        "group_short",
        "created_at",
    ]
    list_display_links = ["pk", "setting_label"]
    list_filter = ["status", "detector", "label_mode", "setting_kind", "label_set"]
    list_select_related = ["label_set"]
    search_fields = ["setting_label", "=group"]
    fields = readonly_fields = [
        "group_link",
        "label_set",
        "test_label_set",
        "tested_against",
        "detector",
        "backbone",
        "label_mode",
        "setting_label",
        "setting",
        "config_overrides",
        "resamples",
        "seed",
        "devices",
        "status",
        "attempts",
        "cancel_requested",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
        "predictions_count",
        "checkpoint_size_text",
    ]
    change_form_template = "admin/modelzoo/benchmarkrun/change_form.html"
    actions = ["compare_runs", "cancel_runs"]

    def get_urls(self):
        wrap, site = self.admin_site.admin_view, self.admin_site
        return [
            path("<int:pk>/progress/", wrap(benchmark_runs.run_progress), name="modelzoo_benchmarkrun_progress"),
            path("<int:pk>/cancel/", wrap(benchmark_runs.run_cancel), name="modelzoo_benchmarkrun_cancel"),
            path("<int:pk>/metrics.<str:kind>", wrap(benchmark_runs.run_metrics), name="modelzoo_benchmarkrun_metrics"),
            path("<int:pk>/files/<str:kind>/", wrap(benchmark_runs.run_file), name="modelzoo_benchmarkrun_file"),
            path(
                "group/<uuid:group>/",
                wrap(benchmark_results.group_page),
                {"admin_site": site},
                name="modelzoo_benchmarkrun_group",
            ),
            path(
                "compare/",
                wrap(benchmark_results.compare_page),
                {"admin_site": site},
                name="modelzoo_benchmarkrun_compare",
            ),
            path("results.<str:kind>", wrap(benchmark_results.results_download), name="modelzoo_benchmarkrun_results"),
            *super().get_urls(),
        ]

    def has_add_permission(self, request):
        return all(request.user.has_perm(perm) for perm in ADD)

    def has_change_permission(self, request, obj=None):
        return False  # written by the worker; cancelling is its own action

    def has_delete_permission(self, request, obj=None):
        return False  # the row is the record of its stored checkpoint and predictions

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not request.user.has_perm("modelzoo.change_benchmarkrun"):
            actions.pop("cancel_runs", None)
        return actions

    @admin.action(description="Compare the selected runs")
    def compare_runs(self, request, queryset):
        ids = ",".join(str(pk) for pk in queryset.order_by("pk").values_list("pk", flat=True))
        return redirect(f"{reverse('admin:modelzoo_benchmarkrun_compare')}?ids={ids}")

    @admin.action(description="Cancel the selected runs")
    def cancel_runs(self, request, queryset):
        require_perm(request, "modelzoo.change_benchmarkrun")
        cancelled = 0
        for run in queryset.filter(status__in=(BenchmarkRun.Status.QUEUED, BenchmarkRun.Status.RUNNING)):
            try:
                benchmark_run_cancel(run=run)
                cancelled += 1
            except BenchmarkRefused:  # it ended in the meantime
                continue
        messages.info(request, f"Cancel requested for {cancelled} run(s); running ones stop at their next step.")

    def add_view(self, request, form_url="", extra_context=None):
        require_perm(request, ADD[0])
        require_perm(request, ADD[1])
        initial = {"label_set": request.GET.get("label_set")} if request.GET.get("label_set") else None
        form = BenchmarkLaunchForm(request.POST or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            try:
                runs = benchmark_runs_launch(**form.launch_arguments(), user=request.user)
            except BenchmarkRefused as refusal:
                form.add_error(refusal.field, str(refusal))
            else:
                messages.info(request, f"{len(runs)} run(s) queued for a GPU worker.")
                if len(runs) == 1:
                    return redirect(reverse("admin:modelzoo_benchmarkrun_change", args=[runs[0].pk]))
                return redirect(reverse("admin:modelzoo_benchmarkrun_group", args=[runs[0].group]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Launch a benchmark",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/modelzoo/benchmarkrun/add.html", context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        run = self.get_object(request, object_id)
        context = benchmark_runs.run_page_context(request, run) if run is not None else {}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **context})

    @admin.display(description="status", ordering="status")
    def state(self, run):
        if run.cancelled:
            return "cancelled"
        if run.finished:
            return run.status
        progress = f"{run.phase} {run.done}/{run.total}" if run.total else run.phase or "waiting for a GPU worker"
        return f"{run.status}: {progress}"

    @admin.display(description="pooled result")
    def headline(self, run):
        if not run.metrics:
            return "-"
        pooled = run.metrics["pooled"]
        return ", ".join(f"{MEASURE_NAMES[measure]} {_value(pooled[measure])}" for measure in run.measures)

    @admin.display(description="detector", ordering="detector")
    def detector_name(self, run):
        return run.detector + (f" ({run.backbone})" if run.backbone else "")

    @admin.display(description="label mode", ordering="label_mode")
    def mode(self, run):
        return run.label_mode

    @admin.display(description="group")
    def group_short(self, run):
        url = reverse("admin:modelzoo_benchmarkrun_group", args=[run.group])
        return format_html('<a href="{}" title="{}">{}</a>', url, run.group, str(run.group)[:8])

    @admin.display(description="group")
    def group_link(self, run):
        url = reverse("admin:modelzoo_benchmarkrun_group", args=[run.group])
        return format_html('<a href="{}">{}</a>', url, run.group)

    @admin.display(description="tested against")
    def tested_against(self, run):
        """Where the test labels come from (crowd, script, LLM, automatic): what the scores mean."""
        tested = run.test_label_set or run.label_set
        return f"{tested}, {'another set' if run.test_label_set else 'the set'}'s test split ({tested.provenance})"

    @admin.display(description="checkpoint size")
    def checkpoint_size_text(self, run):
        return filesizeformat(run.checkpoint_size) if run.checkpoint_size else "-"


def _value(entry: dict) -> str:
    return "undefined" if entry["value"] is None else f"{entry['value']:.3f}"
