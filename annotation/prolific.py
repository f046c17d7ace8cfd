"""A small client for the Prolific API v1: approve, reject, ask to return, bulk approve.

Settings: PROLIFIC_API_TOKEN (empty: the client is off) and PROLIFIC_API_URL.
A submission id is the SESSION_ID of the study link (Participant.prolific_session_id).
Any answer other than 2xx raises ProlificError with the status and Prolific's message.

Standard library only (urllib): `requests` is in the development virtualenv only
as a dependency of test tools, not of the project.
"""

import json
import urllib.error
import urllib.request
from urllib.parse import quote, urljoin

from django.conf import settings

DEFAULT_API_URL = "https://api.prolific.com/api/v1/"
MIN_REJECTION_MESSAGE = 100
REJECTION_CATEGORIES = {
    "TOO_QUICKLY": "Completed too quickly",
    "TOO_SLOWLY": "Completed too slowly",
    "FAILED_INSTRUCTIONS": "Failed to follow the instructions",
    "INCOMP_LONGITUDINAL": "Incomplete longitudinal study",
    "FAILED_CHECK": "Failed an attention check",
    "LOW_EFFORT": "Low effort",
    "MALINGERING": "Malingering",
    "NO_CODE": "No completion code",
    "BAD_CODE": "Wrong completion code",
    "NO_DATA": "No data",
    "UNSUPP_DEVICE": "Unsupported device",
    "OTHER": "Other",
}


class ProlificError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(f"Prolific answered {status}: {message}")
        self.status = status
        self.message = message


class ProlificClient:
    def __init__(self, *, token: str, base_url: str = DEFAULT_API_URL, timeout: float = 30):
        if not token:
            raise ValueError("a Prolific API token is needed")
        self.token = token
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.timeout = timeout

    @classmethod
    def from_settings(cls) -> "ProlificClient | None":
        """The configured client, or None when PROLIFIC_API_TOKEN is empty."""
        token = getattr(settings, "PROLIFIC_API_TOKEN", "")
        if not token:
            return None
        return cls(token=token, base_url=getattr(settings, "PROLIFIC_API_URL", DEFAULT_API_URL))

    def approve(self, submission_id: str) -> dict:
        return self._post(f"submissions/{_segment(submission_id)}/transition/", {"action": "APPROVE"})

    def reject(self, submission_id: str, *, message: str, category: str) -> dict:
        body = {"action": "REJECT", "message": message, "rejection_category": category}
        return self._post(f"submissions/{_segment(submission_id)}/transition/", body)

    def request_return(self, submission_id: str, *, reasons: list[str]) -> dict:
        return self._post(f"submissions/{_segment(submission_id)}/request-return/", {"request_return_reasons": reasons})

    def bulk_approve(self, *, study_id: str, participant_ids: list[str]) -> dict:
        return self._post("submissions/bulk-approve/", {"study_id": study_id, "participant_ids": participant_ids})

    # --- submissions, bonuses and webhooks (issue 22) ---

    def submissions_list(self, *, study_id: str) -> list[dict]:
        """Every submission of the study (id, participant_id, status, bonus_payments), all pages."""
        path, found = f"studies/{_segment(study_id)}/submissions/", []
        while path:
            page, _ = self._request("GET", path, None)
            found.extend(page.get("results", []))
            path = ((page.get("_links") or {}).get("next") or {}).get("href") or ""
        return found

    def bonus_payments_create(self, *, study_id: str, csv_bonuses: str) -> dict:
        """Sets the bonuses up (pays nothing): Prolific's id and total with fees."""
        return self._post("submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv_bonuses})

    def bonus_payments_pay(self, *, bulk_id: str) -> dict:
        """Not idempotent at Prolific: sent twice, it pays twice. Sent once, never retried here."""
        return self._post(f"bulk-bonus-payments/{_segment(bulk_id)}/pay/", {})

    def hook_secret_create(self, *, workspace_id: str) -> dict:
        return self._post("hooks/secrets/", {"workspace_id": workspace_id})

    def hook_subscription_create(self, *, workspace_id: str, event_type: str, target_url: str) -> tuple[dict, str]:
        """The subscription, and the X-Hook-Secret its confirmation needs."""
        body = {"workspace_id": workspace_id, "event_type": event_type, "target_url": target_url}
        answer, headers = self._request("POST", "hooks/subscriptions/", body)
        made = answer.get("results", [answer])
        return (made[0] if made else answer), headers.get("X-Hook-Secret", "")

    def hook_subscription_confirm(self, *, subscription_id: str, secret: str) -> dict:
        return self._post(f"hooks/subscriptions/{_segment(subscription_id)}/", {"secret": secret})

    def _post(self, path: str, body: dict) -> dict:
        return self._request("POST", path, body)[0]

    def _request(self, method: str, path: str, body: dict | None) -> tuple[dict, dict]:
        request = urllib.request.Request(
            urljoin(self.base_url, path),
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={
                "Authorization": f"Token {self.token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return _json_or_empty(response.read()), dict(response.headers.items())
        except urllib.error.HTTPError as error:
            raise ProlificError(error.code, _error_message(error.read())) from None
        except (urllib.error.URLError, TimeoutError) as error:
            raise ProlificError(0, f"could not reach {self.base_url}: {getattr(error, 'reason', error)}") from None


def _segment(value: str) -> str:
    if not value:
        raise ValueError("a submission id is needed")
    return quote(value, safe="")


def _json_or_empty(raw: bytes) -> dict:
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {"results": parsed}


def _error_message(raw: bytes) -> str:
    """Prolific wraps errors as {"error": {"title": ..., "detail": ...}}; fall back to the raw text."""
    body = _json_or_empty(raw)
    error = body.get("error", body)
    if isinstance(error, dict):
        detail = error.get("detail") or error.get("message") or error.get("title")
        if detail:
            return detail if isinstance(detail, str) else json.dumps(detail)
    elif isinstance(error, str) and error:
        return error
    return raw.decode(errors="replace").strip()[:500] or "no message"
