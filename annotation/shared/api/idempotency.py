"""`Idempotency-Key`: a retried POST answers what the first one answered, instead of creating twice.

A script that lost the answer to a create (a timeout, a dropped connection) sends the same request
again with the same header. The first request stores its response (status, body, Location) in an
ApiIdempotencyKey row keyed by (user, key, method, path), with the SHA-256 of its body, in the same
transaction as what it created: either both are there or neither. A retry finds the row and gets
that response again (with `Idempotent-Replayed: true`); the same key with another body is refused
with 422, since answering it with the first result would hide the difference.

Concurrent retries: the key's row is inserted before the work, so on PostgreSQL a second request
with the same key waits on the unique index until the first commits, then reads its row; if the
first failed (any 4xx rolls everything back, the key included), the second does the work itself.

A request without the header is not changed by this module.
"""

import hashlib
import json
from functools import wraps

from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder

from annotation.models import ApiIdempotencyKey

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255


class KeyReused(APIException):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_code = "idempotency_key_reused"


def idempotency_key(request) -> str | None:
    """The request's Idempotency-Key, or None without one; a key that cannot be stored is 400."""
    key = request.headers.get(HEADER)
    if key is None:
        return None
    key = key.strip()
    if not key or len(key) > MAX_KEY_LENGTH:
        raise ValidationError({HEADER: [f"Give a key of 1 to {MAX_KEY_LENGTH} characters, e.g. a UUID."]})
    return key


def answered_once(handler):
    """Wrap a view's POST handler: with an Idempotency-Key, run it at most once per key."""

    @wraps(handler)
    def once(request, *args, **kwargs):
        key = idempotency_key(request)
        if key is None:
            return handler(request, *args, **kwargs)
        return _answer(request, key, lambda: handler(request, *args, **kwargs))

    return once


def _answer(request, key: str, work) -> Response:
    lookup = {"user": request.user, "key": key, "method": request.method, "path": request.path[:500]}
    digest = request_hash(request)
    with transaction.atomic():
        try:
            with transaction.atomic():  # a savepoint: a duplicate key leaves the outer transaction usable
                record = ApiIdempotencyKey.objects.create(**lookup, request_hash=digest, status_code=0)
        except IntegrityError:
            return _replay(ApiIdempotencyKey.objects.get(**lookup), digest)
        response = work()
        if response.status_code >= 400:
            transaction.set_rollback(True)  # a refusal leaves nothing behind, the key included
            return response
        record.status_code = response.status_code
        record.body = _stored(response.data)
        record.location = response.get("Location", "")[:1000]
        record.save(update_fields=["status_code", "body", "location"])
    return response


def _replay(record: ApiIdempotencyKey, digest: str) -> Response:
    if record.request_hash != digest:
        raise KeyReused(
            f"This {HEADER} was used for a request with another body ({record.method} {record.path}); "
            "use a new key for a new request."
        )
    headers = {REPLAYED_HEADER: "true", **({"Location": record.location} if record.location else {})}
    return Response(record.body, status=record.status_code, headers=headers)


def _stored(data):
    # What the client received, as JSON (dates, UUIDs and decimals as DRF renders them).
    return json.loads(json.dumps(data, cls=JSONEncoder))


def request_hash(request) -> str:
    """SHA-256 of what the request asks: its JSON body, or its form fields and files by content."""
    digest = hashlib.sha256()
    data = request.data
    if hasattr(data, "lists"):  # a form (multipart or urlencoded): every value, files by content
        for name, values in sorted(data.lists(), key=lambda pair: pair[0]):
            for value in values:
                digest.update(f"{name}\0".encode())
                digest.update(_file_hash(value) if isinstance(value, UploadedFile) else str(value).encode())
                digest.update(b"\0")
    else:
        digest.update(json.dumps(data, sort_keys=True, cls=JSONEncoder).encode())
    return digest.hexdigest()


def _file_hash(upload: UploadedFile) -> bytes:
    content = hashlib.sha256(f"{upload.name}\0".encode())
    for chunk in upload.chunks():
        content.update(chunk)
    upload.seek(0)  # the view reads it next
    return content.hexdigest().encode()
