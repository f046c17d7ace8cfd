"""One benchmark run's page (the admin's change page, modelzoo.admin wires these URLs): its
progress over htmx, its log, cancelling, and once finished its results and downloads.

Viewing needs modelzoo.view_benchmarkrun; cancelling needs modelzoo.change_benchmarkrun.
"""

import json

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from annotation.shared.downloads import attachment, job_download
from annotation.shared.jobs import job_refresh
from annotation.views.job_progress import job_progress_response
from modelzoo.access import get_run_for_staff
from modelzoo.models import BenchmarkRun
from modelzoo.results import history_rows, metric_rows, results_csv
from modelzoo.selectors.benchmark_runs import human_agreement, run_results, run_summary
from modelzoo.services.benchmark_runs import BenchmarkRefused, benchmark_file_link, benchmark_run_cancel

CHANGE = "modelzoo.change_benchmarkrun"
TEMPLATE = "admin/modelzoo/benchmarkrun/change_form.html"


def run_page_context(request, run: BenchmarkRun) -> dict:
    """What the run's page shows besides its fields."""
    context = {
        "can_cancel": request.user.has_perm(CHANGE),
        "group_size": BenchmarkRun.objects.filter(group=run.group).count(),
        "run_state": "cancelled" if run.cancelled else run.get_status_display().lower(),
    }
    if run.status == BenchmarkRun.Status.SUCCEEDED:
        context |= {
            "metric_rows": metric_rows(run.metrics, run.measures),
            "measures": run.measures,
            "history": history_rows((run.details or {}).get("history", [])),
            "agreement_panels": agreement_panels(run),
        }
    return context


def agreement_panels(run: BenchmarkRun) -> list[dict]:
    """The human agreement behind the labels the scores were measured against: a cross-dataset
    run's test set first (its labels are the ones scored), then the set it was trained on."""
    if run.test_label_set is None:
        return [_panel("Human agreement on the same label set", run.label_set)]
    return [
        _panel(f"Human agreement on the test set, {run.test_label_set}", run.test_label_set),
        _panel(f"Human agreement on the training set, {run.label_set}", run.label_set),
    ]


def _panel(title: str, label_set) -> dict:
    return {"title": title, "agreement_rows": human_agreement(label_sets=[label_set]), "label_sets": [label_set]}


@require_safe
def run_progress(request, pk: int):
    run = job_refresh(get_run_for_staff(request, pk))
    return job_progress_response(request, run, template=f"{TEMPLATE}#progress", context=run_page_context(request, run))


@require_POST
def run_cancel(request, pk: int):
    run = get_run_for_staff(request, pk, perm=CHANGE)
    try:
        run = benchmark_run_cancel(run=run)
    except BenchmarkRefused as refusal:
        messages.error(request, str(refusal))
    else:
        ended = "It is cancelled." if run.cancelled else "The worker stops at its next step."
        messages.success(request, f"Run {run.pk}: cancel requested. {ended}")
    return redirect(reverse("admin:modelzoo_benchmarkrun_change", args=[pk]))


@require_safe
def run_metrics(request, pk: int, kind: str):
    """The run's results as JSON (metrics, history, hyperparameters, the set's agreement) or its
    metrics as CSV (one row per scope and measure, with the interval); 409 until it has succeeded."""
    run = get_run_for_staff(request, pk)
    if kind not in ("csv", "json"):
        raise Http404(f"no metrics as {kind!r}: csv or json")
    return job_download(
        run, page=_page(request, run), what=f"Run {run.pk}'s results", serve=lambda done: _metrics(done, kind)
    )


def _metrics(run: BenchmarkRun, kind: str) -> HttpResponse:
    name = f"benchmark-run-{run.pk}-metrics.{kind}"
    if kind == "json":
        body = json.dumps(run_results(run), indent=2, sort_keys=True) + "\n"
        return attachment(body, filename=name, content_type="application/json")
    return attachment(results_csv([run_summary(run)]), filename=name, content_type="text/csv; charset=utf-8")


@never_cache  # the link expires: a cached redirect would lead to a dead one
@require_safe
def run_file(request, pk: int, kind: str):
    """On to a fresh short-lived link to the run's predictions CSV or checkpoint zip; 409 until it has succeeded."""
    run = get_run_for_staff(request, pk)
    return job_download(
        run,
        page=_page(request, run),
        what=f"Run {run.pk}'s files",
        serve=lambda done: redirect(benchmark_file_link(run=done, kind=kind)),
    )


def _page(request, run: BenchmarkRun) -> str:
    return request.build_absolute_uri(reverse("admin:modelzoo_benchmarkrun_change", args=[run.pk]))
