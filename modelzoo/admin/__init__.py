"""Django admin for the model zoo (the modules register their models)."""

from modelzoo.admin import benchmark_runs, detection_runs  # noqa: F401
