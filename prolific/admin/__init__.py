"""Django admin of the Prolific integration, one module per area: studies on Prolific, the participant
review and its sends, submissions and webhooks, bonus batches, the call log."""

from prolific.admin import (
    bonuses,  # noqa: F401
    calls,  # noqa: F401
    review,  # noqa: F401
    send,  # noqa: F401
    studies,  # noqa: F401
    submissions,  # noqa: F401
)
