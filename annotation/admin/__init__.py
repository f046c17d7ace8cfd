"""Django admin, one module per area: corpora and imports, studies, participant review."""

from annotation.admin import (
    corpus,  # noqa: F401
    listening_form_items,  # noqa: F401
    review,  # noqa: F401
    study,  # noqa: F401
)
