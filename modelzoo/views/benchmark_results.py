"""Several runs together (modelzoo.admin wires these URLs; modelzoo.view_benchmarkrun):

- a group's page: the runs launched together, with the cross-lingual matrix as heat maps or the
  data-scale curve when the group has them;
- the compare page: runs picked in the admin list, side by side;
each with the human agreement of their label sets for scale, and CSV / JSON downloads.
"""

import json

from django.http import Http404
from django.template.response import TemplateResponse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

from annotation.shared.access import require_perm
from annotation.shared.downloads import attachment
from evaluation.reports.svg import curve_chart, heatmap_chart
from modelzoo.access import VIEW
from modelzoo.models import BenchmarkRun
from modelzoo.plans import MODE_MEASURES
from modelzoo.results import MEASURE_NAMES, MEASURES, comparison, cross_lingual_matrix, data_scale_curve, results_csv
from modelzoo.selectors.benchmark_runs import group_runs, human_agreement, run_results, run_summary, runs_with_sets

MAX_COMPARED = 30


@require_safe
def group_page(request, group, *, admin_site):
    require_perm(request, VIEW)
    runs = group_runs(group=group)
    if not runs:
        raise Http404("No benchmark runs in this group.")
    title = f"Benchmark: {runs[0].get_detector_display()} on {runs[0].label_set}"
    context = _results_context(runs) | {
        "charts": _charts([run_summary(run) for run in runs], _measures(runs)),
        "download_query": f"group={group}",
    }
    return _page(request, admin_site, title, context)


@require_safe
def compare_page(request, *, admin_site):
    require_perm(request, VIEW)
    runs = _picked_runs(request)
    context = _results_context(runs) | {"download_query": "ids=" + ",".join(str(run.pk) for run in runs)}
    return _page(request, admin_site, f"Comparing {len(runs)} benchmark runs", context)


@require_safe
def results_download(request, kind: str):
    """The runs of ?group= or ?ids= as CSV (one row per run, scope and measure) or JSON."""
    require_perm(request, VIEW)
    runs = group_runs(group=request.GET["group"]) if request.GET.get("group") else _picked_runs(request)
    name = f"benchmark-results.{kind}"
    if kind == "json":
        body = json.dumps([run_results(run) for run in runs], indent=2, sort_keys=True) + "\n"
        return attachment(body, filename=name, content_type="application/json")
    body = results_csv(run_summary(run) for run in runs)
    return attachment(body, filename=name, content_type="text/csv; charset=utf-8")


def _picked_runs(request) -> list[BenchmarkRun]:
    try:
        ids = [int(part) for part in request.GET.get("ids", "").split(",") if part.strip()][:MAX_COMPARED]
    except ValueError:
        raise Http404("ids must be run numbers, separated by commas") from None
    runs = runs_with_sets().in_bulk(ids)
    if not runs:
        raise Http404("No such benchmark runs.")
    return [runs[pk] for pk in ids if pk in runs]


def _measures(runs: list[BenchmarkRun]) -> tuple[str, ...]:
    wanted = {measure for run in runs for measure in MODE_MEASURES[run.label_mode]}
    return tuple(measure for measure in MEASURES if measure in wanted)


def _results_context(runs: list[BenchmarkRun]) -> dict:
    measures = _measures(runs)
    rows = comparison([run_summary(run) for run in runs], measures)
    return {
        "runs": runs,
        "comparison": [row | {"measure_name": MEASURE_NAMES[row["measure"]]} for row in rows],
        "agreement_panels": [_agreement_panel(runs)],
    }


def _agreement_panel(runs: list[BenchmarkRun]) -> dict:
    """The human agreement of every set the runs trained or were tested on."""
    sets = list({s.pk: s for run in runs for s in (run.label_set, run.test_label_set) if s is not None}.values())
    crossed = any(run.test_label_set is not None for run in runs)
    title = (
        "Human agreement on the label sets trained and tested on"
        if crossed
        else "Human agreement on the same label set"
    )
    return {"title": title, "agreement_rows": human_agreement(label_sets=sets), "label_sets": sets}


def _charts(runs: list[dict], measures: tuple[str, ...]) -> list[str]:
    """Heat maps of the cross-lingual matrix and the data-scale curve, where the runs have them."""
    charts = []
    for measure in measures:
        matrix = cross_lingual_matrix(runs, measure)
        if matrix["cells"]:
            charts.append(
                heatmap_chart(
                    matrix["rows"],
                    matrix["columns"],
                    matrix["cells"],
                    title=f"Cross-lingual {MEASURE_NAMES[measure]}",
                    row_label="trained on",
                    column_label="tested on",
                )
            )
    curves = [(MEASURE_NAMES[measure], data_scale_curve(runs, measure)) for measure in measures]
    if any(points for _, points in curves):
        series = [(name, [(x, e["value"], e["low"], e["high"]) for x, e in points]) for name, points in curves]
        charts.append(
            curve_chart(
                series,
                title="Data scale: pooled test scores",
                x_label="% of the training clips",
                y_label="score (95 % interval)",
            )
        )
    return [mark_safe(chart) for chart in charts]  # built from escaped text only (evaluation.reports.svg)


def _page(request, admin_site, title: str, context: dict):
    context = {**admin_site.each_context(request), "title": title, "opts": BenchmarkRun._meta, **context}
    return TemplateResponse(request, "admin/modelzoo/benchmarkrun/results.html", context)
