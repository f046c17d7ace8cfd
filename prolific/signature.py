"""Prolific's webhook signature (docs.prolific.com, Webhooks > Verifying), without Django.

A hook request carries X-Prolific-Request-Timestamp (a UNIX timestamp of when it was sent) and
X-Prolific-Request-Signature: base64(HMAC-SHA256(secret, timestamp + body)), the body as sent. The
secret is the workspace's, made by `POST hooks/secrets/`. The signature covers the timestamp, so a
request replayed later carries an old timestamp: refused outside the tolerance window, and within
it refused as a repeat of a signature already received (prolific.services.webhooks).
"""

import base64
import hashlib
import hmac

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"


class SignatureRefused(Exception):
    """Why a webhook is not taken as Prolific's; the message is the answer's body."""


def prolific_signature(*, secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def signature_check(
    *, secrets: list[str], signature: str, timestamp: str, body: bytes, now: float, tolerance: float
) -> int:
    """The signed timestamp (seconds) if one of `secrets` signed this body at a time within
    `tolerance` seconds of `now`; raises SignatureRefused otherwise."""
    if not signature or not timestamp:
        raise SignatureRefused(f"missing {SIGNATURE_HEADER} or {TIMESTAMP_HEADER}")
    try:
        signed_at = int(timestamp)
    except ValueError:
        raise SignatureRefused(f"{TIMESTAMP_HEADER} is not a UNIX timestamp: {timestamp[:40]!r}") from None
    if not secrets:
        raise SignatureRefused("no webhook secret is configured (PROLIFIC_WEBHOOK_SECRET, or subscribe from the admin)")
    if not any(
        hmac.compare_digest(prolific_signature(secret=s, timestamp=timestamp, body=body), signature) for s in secrets
    ):
        raise SignatureRefused("the signature does not match")
    # Checked after the signature: the timestamp is trusted only once it is known to be signed.
    if abs(now - signed_at) > tolerance:
        raise SignatureRefused(f"signed {round(now - signed_at)} s from now, outside the {round(tolerance)} s window")
    return signed_at
