"""Django admin for evaluation, one module per area (the modules register their models)."""

from annotation.page_extensions import object_tools_add
from evaluation.admin import (
    agreement_reports,  # noqa: F401
    exports,  # noqa: F401
    label_sets,  # noqa: F401
    suites,  # noqa: F401
)

# The study's pages here (reports, scores, its raw export) among the links of its admin page, which
# is annotation's, a floor below.
object_tools_add(model="annotation.study", template="evaluation/_agreement_report_links.html")
