"""Short-lived signed links to stored files (clip audio, dataset exports).

On S3 the link is a presigned URL, so the browser fetches straight from the bucket. On local
files the link is a Django view of the caller's choosing that checks a timestamped signature
over the stored file's random name. Either way nothing is served from a guessable path.

Each kind of link signs with its own `purpose` (the signing salt), so a token made for one view
is refused by another. A `download_name` makes the file arrive as an attachment under that name
(S3: ResponseContentDisposition in the presigned URL; locally: carried in the token).
"""

import time
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.conf import settings
from django.core import signing
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from django.urls import reverse
from django.utils.http import content_disposition_header


@dataclass(frozen=True)
class Grant:
    """What a valid token lets its bearer fetch."""

    name: str
    download_name: str | None


def signed_file_url(
    stored_name: str, *, purpose: str, view: str, ttl_seconds: int, download_name: str | None = None
) -> str:
    """A link to `stored_name` valid for `ttl_seconds`: presigned on S3, else the URL of `view`
    (which takes the token as its `token` argument)."""
    if storage_presigns():
        parameters = None
        if download_name:
            parameters = {"ResponseContentDisposition": content_disposition_header(True, download_name)}
        return default_storage.url(stored_name, parameters=parameters, expire=ttl_seconds)
    payload = {"name": stored_name, "exp": int(time.time()) + ttl_seconds}
    if download_name:
        payload["as"] = download_name
    return reverse(view, kwargs={"token": signing.dumps(payload, salt=purpose, compress=True)})


def granted_file(token: str, *, purpose: str) -> Grant:
    """The stored file a token grants, or signing.BadSignature if forged, made for another
    purpose, or expired (signing.SignatureExpired, a BadSignature)."""
    payload = signing.loads(token, salt=purpose)
    if not isinstance(payload, dict) or not {"name", "exp"} <= payload.keys():
        raise signing.BadSignature("malformed file token")
    if payload["exp"] < time.time():
        raise signing.SignatureExpired("file link expired")
    return Grant(payload["name"], payload.get("as"))


def storage_presigns() -> bool:
    return settings.STORAGES["default"]["BACKEND"] == "storages.backends.s3.S3Storage"


def granted_download(grant: Grant, *, content_type: str | None = None) -> FileResponse:
    """The granted file as an attachment that no cache keeps; Http404 when it is gone."""
    if not default_storage.exists(grant.name):
        raise Http404("This file no longer exists.")
    response = FileResponse(
        default_storage.open(grant.name, "rb"),
        as_attachment=True,
        filename=grant.download_name or PurePosixPath(grant.name).name,
        content_type=content_type,
    )
    response["Cache-Control"] = "private, no-store"
    return response
