"""A client for Prolific's API v1 (https://docs.prolific.com/api-reference), on httpx.

Settings: PROLIFIC_API_TOKEN (empty: the client is off), PROLIFIC_API_URL (the real base URL by
default; tests point it at tests/prolific_fake), PROLIFIC_TIMEOUT_SECONDS, PROLIFIC_RETRY_ATTEMPTS
and PROLIFIC_RETRY_MAX_WAIT_SECONDS (retries.py says which calls are retried).

A submission id is the SESSION_ID of the study link (Participant.prolific_session_id). Any answer
other than 2xx raises ProlificError with the status and Prolific's message. Every attempt and its
answer is recorded (calls.py, ProlificCall), tied to `study` when the client has one.
"""

import json
import time
from urllib.parse import quote

import httpx
from django.conf import settings
from tenacity import RetryError, Retrying

from prolific.client import calls, retries

DEFAULT_API_URL = "https://api.prolific.com/api/v1/"
STUDY_ACTIONS = ("PUBLISH", "PAUSE", "START", "STOP")


class ProlificError(Exception):
    """Prolific's answer other than 2xx (`status`), or none (status 0). `reached`: whether the call
    may have reached Prolific; False only when no connection was ever made (nothing was sent)."""

    def __init__(self, status: int, message: str, *, reached: bool = True):
        super().__init__(f"Prolific answered {status}: {message}")
        self.status = status
        self.message = message
        self.reached = reached


class ProlificClient:
    def __init__(
        self,
        *,
        token: str,
        base_url: str = DEFAULT_API_URL,
        timeout: float = 30,
        attempts: int = 4,
        max_wait: float = 30,
        initial_wait: float = 0.5,
        study=None,
    ):
        if not token:
            raise ValueError("a Prolific API token is needed")
        self.token = token
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.timeout = timeout
        self.attempts = attempts
        self.max_wait = max_wait
        self.initial_wait = initial_wait
        self.study = study  # our Study the calls are recorded under, or None

    @classmethod
    def from_settings(cls, *, study=None) -> "ProlificClient | None":
        """The configured client, or None when PROLIFIC_API_TOKEN is empty."""
        token = getattr(settings, "PROLIFIC_API_TOKEN", "")
        if not token:
            return None
        return cls(
            token=token,
            base_url=getattr(settings, "PROLIFIC_API_URL", DEFAULT_API_URL),
            timeout=getattr(settings, "PROLIFIC_TIMEOUT_SECONDS", 30),
            attempts=getattr(settings, "PROLIFIC_RETRY_ATTEMPTS", 4),
            max_wait=getattr(settings, "PROLIFIC_RETRY_MAX_WAIT_SECONDS", 30),
            initial_wait=getattr(settings, "PROLIFIC_RETRY_INITIAL_WAIT_SECONDS", 0.5),
            study=study,
        )

    def for_study(self, study) -> "ProlificClient":
        """The same client, its calls recorded under `study`."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__, study=study)
        return clone

    # --- submissions (review) ---------------------------------------------------------

    def approve(self, submission_id: str) -> dict:
        path = f"submissions/{_segment(submission_id, 'submission')}/transition/"
        return self.post(path, {"action": "APPROVE"}, idempotent=True)

    def reject(self, submission_id: str, *, message: str, category: str) -> dict:
        body = {"action": "REJECT", "message": message, "rejection_category": category}
        return self.post(f"submissions/{_segment(submission_id, 'submission')}/transition/", body, idempotent=True)

    def request_return(self, submission_id: str, *, reasons: list[str]) -> dict:
        path = f"submissions/{_segment(submission_id, 'submission')}/request-return/"
        return self.post(path, {"request_return_reasons": reasons}, idempotent=True)

    def bulk_approve(self, *, study_id: str, participant_ids: list[str]) -> dict:
        body = {"study_id": study_id, "participant_ids": participant_ids}
        return self.post("submissions/bulk-approve/", body, idempotent=True)

    # --- studies -------------------------------------------------------------------------

    def study_create(self, body: dict) -> dict:
        """A draft study (UNPUBLISHED). Not retried on a lost answer: it would make a second draft."""
        return self.post("studies/", body, idempotent=False)

    def studies_list(self, *, state: str = "") -> list[dict]:
        return self.get("studies/" + (f"?state={quote(state)}" if state else "")).get("results", [])

    def study_get(self, study_id: str) -> dict:
        return self.get(f"studies/{_segment(study_id, 'study')}/")

    def study_update(self, study_id: str, fields: dict) -> dict:
        return self.request("PATCH", f"studies/{_segment(study_id, 'study')}/", body=fields, idempotent=True)

    def study_transition(self, study_id: str, action: str) -> dict:
        if action not in STUDY_ACTIONS:
            raise ValueError(f"a study transition is one of {', '.join(STUDY_ACTIONS)}, not {action!r}")
        return self.post(f"studies/{_segment(study_id, 'study')}/transition/", {"action": action}, idempotent=True)

    def filters_list(self) -> list[dict]:
        """Prolific's screeners: [{filter_id, type ("select"|"range"), choices|min/max, ...}]."""
        return self.get("filters/").get("results", [])

    # --- participant groups ------------------------------------------------------------------

    def participant_group_create(self, *, name: str, workspace_id: str, description: str = "") -> dict:
        body = {"name": name, "workspace_id": workspace_id}
        if description:
            body["description"] = description
        return self.post("participant-groups/", body, idempotent=False)

    def participant_group_add(self, group_id: str, participant_ids: list[str]) -> dict:
        """Prolific ignores participants already in the group, so this is safe to repeat."""
        path = f"participant-groups/{_segment(group_id, 'participant group')}/participants/"
        return self.post(path, {"participant_ids": participant_ids}, idempotent=True)

    def participant_group_members(self, group_id: str) -> list[dict]:
        return self.get(f"participant-groups/{_segment(group_id, 'participant group')}/participants/").get(
            "results", []
        )

    # --- submissions, bonuses and webhooks (issue 22) -------------------------------------------

    def submissions_list(self, *, study_id: str) -> list[dict]:
        """Every submission of the study (id, participant_id, status, bonus_payments), all pages."""
        path, found = f"studies/{_segment(study_id, 'study')}/submissions/", []
        while path:
            page = self.get(path)
            found.extend(page.get("results", []))
            following = ((page.get("_links") or {}).get("next") or {}).get("href") or ""
            path = following.removeprefix(self.base_url)
        return found

    def bonus_payments_create(self, *, study_id: str, csv_bonuses: str) -> dict:
        """Sets the bonuses up (pays nothing): Prolific's id, and amount, fees, vat and total_amount in
        cents (the CSV's amounts are in the study's currency, "1.50 for £1.50"). Not retried on a lost
        answer: it would set up a second batch (harmless, but confusing)."""
        body = {"study_id": study_id, "csv_bonuses": csv_bonuses}
        return self.post("submissions/bonus-payments/", body, idempotent=False)

    def bonus_payments_pay(self, *, bulk_id: str) -> dict:
        """Accepted with 202: Prolific pays in the following minutes, so an answer says nothing about
        the payment itself (the submissions' bonus_payments do). Not idempotent at Prolific: sent
        twice, it pays twice. Never retried after it may have reached Prolific (retries.py);
        prolific.services.bonuses sends it once, unless a recovery finds none of it paid."""
        return self.post(f"bulk-bonus-payments/{_segment(bulk_id, 'bulk bonus payment')}/pay/", {}, idempotent=False)

    def hook_secret_create(self, *, workspace_id: str) -> dict:
        """The workspace's new signing secret ({id, value, workspace_id}); it replaces the old one."""
        return self.post("hooks/secrets/", {"workspace_id": workspace_id}, idempotent=False)

    def hook_subscription_create(self, *, workspace_id: str, event_type: str, target_url: str) -> tuple[dict, str]:
        """The subscription, and the X-Hook-Secret its confirmation needs."""
        body = {"workspace_id": workspace_id, "event_type": event_type, "target_url": target_url}
        response = self._answered("POST", "hooks/subscriptions/", body, idempotent=False)
        answer = _json_or_empty(response.text)
        made = answer.get("results") or [answer]
        return made[0], response.headers.get("X-Hook-Secret", "")

    def hook_subscription_confirm(self, *, subscription_id: str, secret: str) -> dict:
        path = f"hooks/subscriptions/{_segment(subscription_id, 'subscription')}/"
        return self.post(path, {"secret": secret}, idempotent=True)

    # --- transport ---------------------------------------------------------------------------

    def get(self, path: str) -> dict:
        return self.request("GET", path, idempotent=True)

    def post(self, path: str, body: dict, *, idempotent: bool) -> dict:
        return self.request("POST", path, body=body, idempotent=idempotent)

    def request(self, method: str, path: str, *, body: dict | None = None, idempotent: bool) -> dict:
        """One call, tried again as retries.py allows; the JSON answer, {} for an empty one."""
        return _json_or_empty(self._answered(method, path, body, idempotent=idempotent).text)

    def _answered(self, method: str, path: str, body: dict | None, *, idempotent: bool) -> httpx.Response:
        """The 2xx answer of the call, tried again as retries.py allows; ProlificError otherwise."""
        retrying = Retrying(
            retry=retries.should_retry(idempotent),
            stop=retries.stop(self.attempts),
            wait=retries.WaitRetryAfter(max_wait=self.max_wait, initial=self.initial_wait),
            reraise=False,
        )
        attempt_number = 0
        try:
            for attempt in retrying:
                with attempt:
                    attempt_number += 1
                    response = self._attempt(method, path, body, attempt_number)
        except RetryError as gave_up:
            raise _as_error(gave_up.last_attempt.exception(), self.base_url) from None
        except (retries.RetryableAnswer, httpx.HTTPError) as error:
            raise _as_error(error, self.base_url) from None
        if not response.is_success:
            raise ProlificError(response.status_code, _error_message(response.text))
        return response

    def _attempt(self, method: str, path: str, body: dict | None, attempt: int) -> httpx.Response:
        started = time.monotonic()
        record = {
            "study": self.study if getattr(self.study, "pk", None) else None,
            "method": method,
            "path": path,
            "request_body": calls.masked(body),
            "attempt": attempt,
        }
        try:
            response = httpx.request(
                method,
                self.base_url + path,
                json=body,
                timeout=self.timeout,
                headers={"Authorization": f"Token {self.token}", "Accept": "application/json"},
            )
        except httpx.HTTPError as error:
            calls.call_record(
                **record, status=0, error=f"{type(error).__name__}: {error}"[:500], duration_ms=_ms(started)
            )
            raise
        calls.call_record(
            **record,
            status=response.status_code,
            response_body=calls.kept_answer(response.text, path=path),
            duration_ms=_ms(started),
        )
        if response.status_code == 429 or response.status_code >= 500:
            raise retries.RetryableAnswer(response)
        return response


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def _as_error(error: BaseException | None, base_url: str) -> ProlificError:
    if isinstance(error, retries.RetryableAnswer):
        return ProlificError(error.response.status_code, _error_message(error.response.text))
    if isinstance(error, httpx.ConnectTimeout | httpx.ConnectError):
        return ProlificError(0, f"could not connect to {base_url}: {error or type(error).__name__}", reached=False)
    if isinstance(error, httpx.TimeoutException):
        return ProlificError(0, f"no answer from {base_url} in time ({type(error).__name__})")
    return ProlificError(0, f"could not reach {base_url}: {error}")


def _segment(value: str, what: str) -> str:
    if not value:
        raise ValueError(f"a {what} id is needed")
    return quote(value, safe="")


def _json_or_empty(raw: str) -> dict:
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {"results": parsed}


def _error_message(raw: str) -> str:
    """Prolific wraps errors as {"error": {"title": ..., "detail": ...}}; fall back to the raw text."""
    body = _json_or_empty(raw)
    error = body.get("error", body)
    if isinstance(error, dict):
        detail = error.get("detail") or error.get("message") or error.get("title")
        if detail:
            return detail if isinstance(detail, str) else json.dumps(detail)
    elif isinstance(error, str) and error:
        return error
    return raw.strip()[:500] or "no message"
