"""Short-lived signed links to clip audio.

On S3 the link is a presigned URL, so the browser fetches straight from the
bucket (which handles Range requests). On local files the link is a Django
view that checks a timestamped signature over the stored file's random name.
Either way nothing is served from a guessable path.
"""

import time

from django.conf import settings
from django.core import signing
from django.core.files.storage import default_storage
from django.urls import reverse

_SALT = "annotation.audio-link"


def signed_audio_url(stored_name: str, *, ttl_seconds: int | None = None) -> str:
    ttl = ttl_seconds or settings.AUDIO_URL_TTL_SECONDS
    if _storage_presigns():
        return default_storage.url(stored_name, expire=ttl)
    expires = int(time.time()) + ttl
    token = signing.dumps({"name": stored_name, "exp": expires}, salt=_SALT, compress=True)
    return reverse("annotation:audio", kwargs={"token": token})


def stored_name_from_token(token: str) -> str:
    """The stored file a token grants, or signing.BadSignature if forged or expired."""
    payload = signing.loads(token, salt=_SALT)
    if not isinstance(payload, dict) or not {"name", "exp"} <= payload.keys():
        raise signing.BadSignature("malformed audio token")
    if payload["exp"] < time.time():
        raise signing.SignatureExpired("audio link expired")
    return payload["name"]


def _storage_presigns() -> bool:
    return settings.STORAGES["default"]["BACKEND"] == "storages.backends.s3.S3Storage"
