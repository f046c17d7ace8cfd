import mimetypes

from django.core import signing
from django.core.files.storage import default_storage
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.views.decorators.http import require_safe
from werkzeug.http import parse_range_header

from annotation.audio_links import stored_name_from_token

_CHUNK = 64 * 1024


@require_safe
def audio(request, token: str):
    """Serve a stored audio file granted by a signed token, with Range support."""
    try:
        name = stored_name_from_token(token)
    except signing.BadSignature:
        raise Http404("This audio link is invalid or has expired.") from None
    if not default_storage.exists(name):
        raise Http404("This audio file no longer exists.")
    size = default_storage.size(name)
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    span = _requested_span(request.headers.get("Range"), size)
    if span == "unsatisfiable":
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
        return _common_headers(response)
    start, stop = span if span else (0, size)
    response = StreamingHttpResponse(
        _read_span(name, start, stop), status=206 if span else 200, content_type=content_type
    )
    response["Content-Length"] = str(stop - start)
    if span:
        response["Content-Range"] = f"bytes {start}-{stop - 1}/{size}"
    return _common_headers(response)


def _requested_span(header: str | None, size: int):
    """(start, stop) for one satisfiable range, None to send the whole file,
    or "unsatisfiable". Several ranges at once are answered with the whole file,
    which HTTP allows."""
    if not header:
        return None
    parsed = parse_range_header(header)
    if parsed is None or len(parsed.ranges) != 1:
        return None
    span = parsed.range_for_length(size)
    return span if span is not None else "unsatisfiable"


def _read_span(name: str, start: int, stop: int):
    with default_storage.open(name, "rb") as handle:
        handle.seek(start)
        remaining = stop - start
        while remaining > 0:
            chunk = handle.read(min(_CHUNK, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            yield chunk


def _common_headers(response):
    response["Accept-Ranges"] = "bytes"
    response["Cache-Control"] = "private, max-age=300"
    return response
