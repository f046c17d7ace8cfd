"""A benchmark run's stored files through a local short-lived link (on S3 the link is presigned
and this view is not used). Whoever holds a valid token may download, as with a presigned URL;
staff get the link from the run's page or the API (modelzoo.services.benchmark_runs)."""

from django.core import signing
from django.http import Http404
from django.views.decorators.http import require_safe

from annotation.signed_links import granted_download
from modelzoo.services.benchmark_runs import benchmark_file_grant


@require_safe
def file_download(request, token: str):
    try:
        grant = benchmark_file_grant(token=token)
    except signing.BadSignature:
        raise Http404("This download link is invalid or has expired.") from None
    return granted_download(grant)
