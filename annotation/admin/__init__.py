"""Django admin, one module per area: corpora and imports, studies, submitted annotations, webhooks out;
the accounts' and API tokens' pages on the platform's base admin. The Prolific integration's pages (the
participant review among them) are in prolific/admin/."""

from annotation.admin import (
    accounts,  # noqa: F401
    annotations,  # noqa: F401
    corpus,  # noqa: F401
    listening_form_items,  # noqa: F401
    study,  # noqa: F401
    webhooks,  # noqa: F401
)
