"""A benchmark run's stored files through a local short-lived link (on S3 the link is presigned
and this view is not used). Whoever holds a valid token may download, as with a presigned URL;
staff get the link from the run's page or the API (modelzoo.services.benchmark_runs)."""

from pathlib import PurePosixPath

from django.core import signing
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from django.views.decorators.http import require_safe

from modelzoo.services.benchmark_runs import benchmark_file_grant


@require_safe
def file_download(request, token: str):
    try:
        grant = benchmark_file_grant(token=token)
    except signing.BadSignature:
        raise Http404("This download link is invalid or has expired.") from None
    if not default_storage.exists(grant.name):
        raise Http404("This file no longer exists.")
    response = FileResponse(
        default_storage.open(grant.name, "rb"), as_attachment=True,
        filename=grant.download_name or PurePosixPath(grant.name).name,
    )  # fmt: skip
    response["Cache-Control"] = "private, no-store"
    return response
