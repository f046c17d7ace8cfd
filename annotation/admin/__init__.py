"""Django admin, one module per area: corpora and imports, studies, participant review, Prolific sends,
submitted annotations; the accounts' and API tokens' pages on the platform's base admin."""

from annotation.admin import (
    accounts,  # noqa: F401
    annotations,  # noqa: F401
    corpus,  # noqa: F401
    listening_form_items,  # noqa: F401
    prolific_bonuses,  # noqa: F401
    prolific_calls,  # noqa: F401
    prolific_send,  # noqa: F401
    prolific_studies,  # noqa: F401
    prolific_submissions,  # noqa: F401
    review,  # noqa: F401
    study,  # noqa: F401
    webhooks,  # noqa: F401
)
