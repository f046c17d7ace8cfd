"""When a call to Prolific is tried again, and how long to wait first (tenacity).

429 (too many requests) is always safe to retry: Prolific refused it unprocessed. A 5xx answer,
a timeout or a dropped connection is retried only for a call that is safe to repeat (GET, PATCH of
a field to a value, a transition, adding to a group), never for one that moves money such as a
bonus payment: that call may have been carried out before the answer was lost. A connection that
was never made is safe for every call: nothing reached Prolific.

The wait honours Retry-After (seconds, or an HTTP date) when Prolific sends one, capped at
`max_wait`; otherwise exponential backoff with jitter.
"""

import email.utils
import time

import httpx
from tenacity import RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential, wait_random


class RetryableAnswer(Exception):
    """An answer worth trying again; carries it so that the last one can be reported."""

    def __init__(self, response: httpx.Response):
        super().__init__(f"Prolific answered {response.status_code}")
        self.response = response


def should_retry(idempotent: bool):
    def check(error: BaseException) -> bool:
        if isinstance(error, RetryableAnswer):
            status = error.response.status_code
            return status == 429 or (idempotent and status >= 500)
        if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout):
            return True  # no connection was made: nothing reached Prolific
        return idempotent and isinstance(error, httpx.TransportError)

    return retry_if_exception(check)


class WaitRetryAfter:
    """Retry-After when the last answer has one, else the fallback wait."""

    def __init__(self, *, max_wait: float, initial: float):
        self.max_wait = max_wait
        self.fallback = wait_exponential(multiplier=initial, max=max_wait) + wait_random(0, initial)

    def __call__(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, RetryableAnswer):
            seconds = retry_after_seconds(error.response.headers.get("Retry-After"))
            if seconds is not None:
                return min(seconds, self.max_wait)
        return self.fallback(state)


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: a number of seconds or an HTTP date (RFC 9110, 10.2.3)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def stop(attempts: int):
    return stop_after_attempt(max(1, attempts))
