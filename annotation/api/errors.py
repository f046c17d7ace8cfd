"""Every API error is JSON: {"detail": "..."} or {"<field>": ["message", ...]}.

DRF already answers so for its own exceptions (401, 403, 404, 405, 415, 429, field validation).
The handler adds the one shape DRF leaves as a bare list (a ValidationError raised with a
message, not a dict), `Refused` carries a service's refusal, and `not_found` answers a path under
/api/v1/ that names no endpoint, which Django would answer with an HTML page.
"""

from django.http import JsonResponse
from rest_framework.exceptions import APIException, ParseError
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler


class Refused(APIException):
    """A service refused the action, e.g. finalizing a label set still being built: 400 with its reason."""

    status_code = 400
    default_detail = "The action was refused."
    default_code = "refused"


def exception_handler(exc, context):
    if isinstance(exc, RecursionError):  # a body nested too deeply for the JSON parser
        exc = ParseError("JSON parse error - nested too deeply")
    response = drf_exception_handler(exc, context)
    if response is not None and not isinstance(response.data, dict):
        response.data = {api_settings.NON_FIELD_ERRORS_KEY: response.data}
    return response


def not_found(request, *args, **kwargs) -> JsonResponse:
    message = "No such endpoint. Paths end with a slash; /api/docs/ lists them."
    return JsonResponse({"detail": message}, status=404)
