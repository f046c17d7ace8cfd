"""A participant request that finds the database unreachable gets a page asking
them to try again in a moment (503 with Retry-After), not the generic error page:
an outage of a few seconds (a failover, a restart) should cost nobody their place."""

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.template.loader import render_to_string

RETRY_AFTER_SECONDS = 5


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        match = request.resolver_match
        if not isinstance(exception, (OperationalError, InterfaceError)) or match is None:
            return None
        if match.app_name != "annotation":  # the participant's pages; staff get the usual error
            return None
        # Rendered without the request: its context processors could need the database.
        response = HttpResponse(render_to_string("503.html"), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        response["Cache-Control"] = "no-store"
        return response
