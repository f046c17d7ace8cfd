"""Django admin for evaluation, one module per area (the modules register their models)."""

from evaluation.admin import (
    agreement_reports,  # noqa: F401
    exports,  # noqa: F401
    label_sets,  # noqa: F401
    suites,  # noqa: F401
)
