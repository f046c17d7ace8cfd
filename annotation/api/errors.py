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

from annotation.views.downloads import RETRY_AFTER_SECONDS


class Refused(APIException):
    """A service refused the action, e.g. finalizing a label set still being built: 400 with its reason."""

    status_code = 400
    default_detail = "The action was refused."
    default_code = "refused"


class TooManyImports(APIException):
    """The caller has as many imports under way as they may (annotation.services.import_slots): 429."""

    status_code = 429
    default_code = "too_many_imports"
    wait = 30  # DRF sends it as Retry-After


class NotReady(APIException):
    """What a background job makes is not there yet: 409, as every download answers it
    (annotation.views.downloads), with Retry-After while the job is queued or running (DRF's
    handler sends `wait` as that header)."""

    status_code = 409
    default_code = "not_ready"

    def __init__(self, job, *, what: str):
        if job.status == job.Status.FAILED:
            detail = f"{what} failed: {job.error}"
        else:
            detail = f"{what}: not ready yet ({job.phase or 'waiting for a worker'}); try again in a moment"
        self.wait = None if job.finished else RETRY_AFTER_SECONDS
        super().__init__(detail)


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
