"""Every call to Prolific and its answer, kept for the researcher to read (ProlificCall, in the
admin). The token travels in the Authorization header, which is never stored; body fields whose
name says secret or token are masked before they are kept."""

import json
import logging

logger = logging.getLogger(__name__)

MASK = "********"
MAX_KEPT = 20_000  # characters of an answer kept; a long list of submissions is cut


def masked(value):
    if isinstance(value, dict):
        return {key: MASK if _secret(key) else masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [masked(item) for item in value]
    return value


def _secret(key: str) -> bool:
    key = str(key).lower()
    return "secret" in key or "token" in key or key == "authorization"


def kept_answer(text: str):
    """The answer as JSON when it is JSON (masked), else its text, cut to MAX_KEPT."""
    try:
        parsed = json.loads(text) if text.strip() else None
    except ValueError:
        return text[:MAX_KEPT]
    kept = masked(parsed)
    if len(text) > MAX_KEPT:
        return {"cut": True, "start": json.dumps(kept)[:MAX_KEPT]}
    return kept


def call_record(**fields) -> None:
    """Store one call; a failure to store it never fails the call itself."""
    from django.db import transaction

    from annotation.models import ProlificCall  # the models import this package's constants

    try:
        with transaction.atomic():  # a savepoint: a failed insert leaves the caller's transaction usable
            ProlificCall.objects.create(**fields)
    except Exception:
        logger.exception("could not record a Prolific call to %s", fields.get("path"))
