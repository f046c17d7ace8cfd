"""Access checks for the benchmark pages, on the rule of annotation/shared/access.py (403 before 404;
the helper returns the run or raises)."""

from django.shortcuts import get_object_or_404

from annotation.shared.access import require_perm
from modelzoo.models import BenchmarkRun
from modelzoo.selectors.benchmark_runs import runs_with_sets

VIEW = "modelzoo.view_benchmarkrun"


def get_run_for_staff(
    request, pk: int, *, perm: str | tuple[str, ...] = VIEW, status: str | None = None
) -> BenchmarkRun:
    """The run `pk` with its label sets (in `status`, when given: a run in another state is 404 too)."""
    require_perm(request, perm)
    lookup = {"pk": pk} if status is None else {"pk": pk, "status": status}
    return get_object_or_404(runs_with_sets(), **lookup)
