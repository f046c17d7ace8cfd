"""The 400 page (config.urls handler400): an upload refused as it arrived (annotation.uploads) says
why, in plain text, to the staff member who sent it; any other 400 is Django's page, which tells
nothing of the request."""

from django.http import HttpResponseBadRequest
from django.views import defaults

from annotation.uploads import UploadTooLarge


def bad_request(request, exception):
    if isinstance(exception, UploadTooLarge):
        return HttpResponseBadRequest(f"Bad request: {exception}\n", content_type="text/plain; charset=utf-8")
    return defaults.bad_request(request, exception)
