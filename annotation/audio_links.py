"""Short-lived signed links to clip audio (annotation.signed_links, for the audio view).

On S3 the link is a presigned URL, so the browser fetches straight from the
bucket (which handles Range requests). On local files the link is the
annotation:audio view, which checks a timestamped signature over the stored
file's random name. Either way nothing is served from a guessable path.
"""

from django.conf import settings

from annotation.signed_links import granted_file, signed_file_url

_SALT = "annotation.audio-link"


def signed_audio_url(stored_name: str, *, ttl_seconds: int | None = None) -> str:
    ttl = ttl_seconds or settings.AUDIO_URL_TTL_SECONDS
    return signed_file_url(stored_name, purpose=_SALT, view="annotation:audio", ttl_seconds=ttl)


def stored_name_from_token(token: str) -> str:
    """The stored file a token grants, or signing.BadSignature if forged or expired."""
    return granted_file(token, purpose=_SALT).name
