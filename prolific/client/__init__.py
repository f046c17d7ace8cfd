"""Prolific's API v1: the client (client.py), its retries (retries.py) and the record of every
call (calls.py). Study-side services are in prolific/services/studies.py.

`from prolific.client import ProlificClient, ProlificError`.
"""

from prolific.client.client import DEFAULT_API_URL, ProlificClient, ProlificError

__all__ = ["DEFAULT_API_URL", "ProlificClient", "ProlificError"]
