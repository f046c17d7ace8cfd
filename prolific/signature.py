"""Prolific's webhook signature (docs.prolific.com, Webhooks > Verifying), without Django.

A hook request carries X-Prolific-Request-Timestamp (a UNIX timestamp of when it was sent) and
X-Prolific-Request-Signature: base64(HMAC-SHA256(secret, timestamp + body)), the body as sent. The
secret is the workspace's, made by `POST hooks/secrets/`. The signature covers the timestamp and the
body, not the other headers: X-Event-ID (one per event, the same on every redelivery) and
X-Timestamp (when the event was sent, for ordering) are taken as they come once the body is known
to be Prolific's (prolific.services.webhooks).
"""

import base64
import hashlib
import hmac

from annotation.refusals import Refused

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
EVENT_TIMESTAMP_HEADER = "X-Timestamp"


class SignatureRefused(Refused):
    """Why a webhook is not taken as Prolific's; the message is the answer's body."""


def prolific_signature(*, secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def signature_check(
    *, secrets: list[str], signature: str, timestamp: str, body: bytes, now: float, tolerance: float | None
) -> int:
    """The signed timestamp (seconds) if one of `secrets` signed this body (at a time within
    `tolerance` seconds of `now`, unless it is None: the caller judges the age); raises
    SignatureRefused otherwise."""
    if not signature or not timestamp:
        raise SignatureRefused(f"missing {SIGNATURE_HEADER} or {TIMESTAMP_HEADER}")
    if not timestamp.isdigit() or len(timestamp) > 12:  # seconds; 12 digits reach far past any clock
        raise SignatureRefused(f"{TIMESTAMP_HEADER} is not a UNIX timestamp: {timestamp[:40]!r}")
    signed_at = int(timestamp)
    if not secrets:
        raise SignatureRefused("no webhook secret is configured (PROLIFIC_WEBHOOK_SECRET, or subscribe from the admin)")
    if not any(
        hmac.compare_digest(prolific_signature(secret=s, timestamp=timestamp, body=body), signature) for s in secrets
    ):
        raise SignatureRefused("the signature does not match")
    # Checked after the signature: the timestamp is trusted only once it is known to be signed.
    if tolerance is not None and abs(now - signed_at) > tolerance:
        raise SignatureRefused(f"signed {round(now - signed_at)} s from now, outside the {round(tolerance)} s window")
    return signed_at
