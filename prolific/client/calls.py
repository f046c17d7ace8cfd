"""Every call to Prolific and its answer, kept for the researcher to read (ProlificCall, in the
admin). The token travels in the Authorization header, which is never stored; body fields whose
name says secret or token are masked before they are kept, and so is the `value` of an answer to
`hooks/secrets/` (the workspace's webhook signing secret)."""

import json
import logging

logger = logging.getLogger(__name__)

MASK = "********"
MAX_KEPT = 20_000  # characters of an answer kept; a long list of submissions is cut
# Paths whose answers carry a secret under a name that does not say so: masked keys beyond _secret's.
SECRET_ANSWER_KEYS = {"hooks/secrets/": frozenset({"value"})}


def masked(value, *, also: frozenset = frozenset()):
    """`value` with every field named like a secret (or named in `also`) masked, at any depth."""
    if isinstance(value, dict):
        return {
            key: MASK if _secret(key) or str(key).lower() in also else masked(item, also=also)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [masked(item, also=also) for item in value]
    return value


def _secret(key: str) -> bool:
    key = str(key).lower()
    return "secret" in key or "token" in key or key == "authorization"


def answer_secret_keys(path: str) -> frozenset:
    """The extra keys masked in the answer of a call to `path` (`value` for hooks/secrets/)."""
    return SECRET_ANSWER_KEYS.get(path.split("?", 1)[0].lstrip("/"), frozenset())


def kept_answer(text: str, *, path: str = ""):
    """The answer as JSON when it is JSON (masked), else its text, cut to MAX_KEPT. An answer of a
    path that carries a secret and is not JSON is not kept at all."""
    also = answer_secret_keys(path)
    try:
        parsed = json.loads(text) if text.strip() else None
    except ValueError:
        return MASK if also and text.strip() else text[:MAX_KEPT]
    kept = masked(parsed, also=also)
    if len(text) > MAX_KEPT:
        return {"cut": True, "start": json.dumps(kept)[:MAX_KEPT]}
    return kept


def call_record(**fields) -> None:
    """Store one call; a failure to store it never fails the call itself."""
    from django.db import transaction

    from prolific.models import ProlificCall  # the models import this package's constants

    try:
        with transaction.atomic():  # a savepoint: a failed insert leaves the caller's transaction usable
            ProlificCall.objects.create(**fields)
    except Exception:
        logger.exception("could not record a Prolific call to %s", fields.get("path"))
