"""Prolific's API v1: the client (client.py), its retries (retries.py) and the record of every
call (calls.py). Study-side services are in annotation/services/prolific_studies.py.

`from annotation.prolific import ProlificClient, ProlificError` keeps working as it did when this
was one module.
"""

from annotation.prolific.client import (
    DEFAULT_API_URL,
    MIN_REJECTION_MESSAGE,
    REJECTION_CATEGORIES,
    ProlificClient,
    ProlificError,
)

__all__ = ["DEFAULT_API_URL", "MIN_REJECTION_MESSAGE", "REJECTION_CATEGORIES", "ProlificClient", "ProlificError"]
