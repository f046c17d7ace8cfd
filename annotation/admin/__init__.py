"""Django admin, one module per area: corpora and imports, studies, submitted annotations,
webhooks out. The Prolific integration's pages (the participant review among them) are in prolific/admin/."""

from annotation.admin import (
    annotations,  # noqa: F401
    corpus,  # noqa: F401
    listening_form_items,  # noqa: F401
    study,  # noqa: F401
    webhooks,  # noqa: F401
)
