"""Django admin for evaluation, one module per area (the modules register their models)."""

from evaluation.admin import (
    exports,  # noqa: F401
    label_sets,  # noqa: F401
    reports,  # noqa: F401
    suites,  # noqa: F401
)
