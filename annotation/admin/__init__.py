"""Django admin, one module per area: corpora and imports, studies, participant review."""

from annotation.admin import corpus  # noqa: F401
from annotation.admin import study  # noqa: F401
from annotation.admin import review  # noqa: F401
from annotation.admin import form_items  # noqa: F401
