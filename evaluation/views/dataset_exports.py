"""Downloading a dataset export.

Staff with evaluation.view_datasetexport and the right to read what the export holds (as asking
for it needs: evaluation.access.export_read_perms) get a fresh short-lived link from `export_link`
(wired in the admin, evaluation.admin.exports) and are sent on to it: on S3 a presigned URL, locally
`export_download`, which serves the zip to whoever holds a valid token (as a presigned URL
would), as an attachment under the export's file name.
"""

from django.core import signing
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from annotation.shared.downloads import job_download
from annotation.signed_links import granted_download
from evaluation.access import get_export_for_download
from evaluation.services.dataset_exports import dataset_export_grant, dataset_export_link


@never_cache  # the link expires: a cached redirect would lead to a dead one
@require_safe
def export_link(request, pk: int):
    """On to the zip, for one who may read what it holds; 409 while it is being built."""
    export = get_export_for_download(request, pk)
    page = request.build_absolute_uri(reverse("admin:evaluation_datasetexport_change", args=[export.pk]))
    return job_download(
        export, page=page, what="The export", serve=lambda done: redirect(dataset_export_link(export=done))
    )


@require_safe
def export_download(request, token: str):
    try:
        grant = dataset_export_grant(token=token)
    except signing.BadSignature:
        raise Http404("This download link is invalid or has expired.") from None
    return granted_download(grant, content_type="application/zip")
