"""Every API error is JSON: {"detail": "..."} or {"<field>": ["message", ...]}.

DRF already answers so for its own exceptions (401, 403, 404, 405, 415, 429, field validation).
The handler adds the one shape DRF leaves as a bare list (a ValidationError raised with a
message, not a dict), and answers every service's refusal (annotation.refusals.Refused: a bad
import, finalizing a label set still being built) with one 400 body, `refusal_body`: "detail",
and for refusals of particular records "problems" (the first SHOWN_PROBLEMS, each as
annotation.refusals.Problem) and "more_problems". `not_found` answers a path under /api/v1/ that
names no endpoint, which Django would answer with an HTML page.
"""

from django.http import JsonResponse
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.exceptions import APIException, ParseError
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from annotation.refusals import SHOWN_PROBLEMS, Refused
from annotation.shared.downloads import RETRY_AFTER_SECONDS


class ProblemSerializer(serializers.Serializer):
    """One record a refusal is about (annotation.refusals.Problem)."""

    file = serializers.CharField(allow_null=True, help_text="The file, where the record is a line of one file.")
    line = serializers.IntegerField(allow_null=True, help_text="The line in `file` (from 1), or null.")
    where = serializers.CharField(help_text='Where the record is, in words: "items.jsonl line 3", "x.parquet row 17".')
    item = serializers.CharField(help_text='The clip or item id the record names; "" if none.')
    field = serializers.CharField(help_text='The field at fault; "" for the record as a whole.')
    reason = serializers.CharField()


class RefusalSerializer(serializers.Serializer):
    """Every refusal's 400 body (refusal_body)."""

    detail = serializers.CharField(
        help_text="Why; for an import, the whole message, as the management command prints it."
    )
    problems = ProblemSerializer(
        many=True,
        required=False,
        help_text=f"The records at fault, the first {SHOWN_PROBLEMS} (refusals of records only).",
    )
    more_problems = serializers.IntegerField(required=False, help_text="How many more there are, beyond `problems`.")


REFUSED = OpenApiResponse(RefusalSerializer, description="Refused, saying why; nothing was written.")


def refusal_body(refusal: Refused) -> dict:
    body = {"detail": str(refusal)}
    problems = refusal.located()
    if problems:
        shown = problems[:SHOWN_PROBLEMS]
        body["problems"] = [problem.as_dict() for problem in shown]
        body["more_problems"] = len(problems) - len(shown)
    return body


class TooManyImports(APIException):
    """The caller has as many imports under way as they may (annotation.services.import_slots): 429."""

    status_code = 429
    default_code = "too_many_imports"
    wait = 30  # DRF sends it as Retry-After


class NotReady(APIException):
    """What a background job makes is not there yet: 409, as every download answers it
    (annotation.shared.downloads), with Retry-After while the job is queued or running (DRF's
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
    if isinstance(exc, Refused):
        set_rollback()  # as DRF's handler does for its own exceptions
        return Response(refusal_body(exc), status=400)
    response = drf_exception_handler(exc, context)
    if response is not None and not isinstance(response.data, dict):
        response.data = {api_settings.NON_FIELD_ERRORS_KEY: response.data}
    return response


def not_found(request, *args, **kwargs) -> JsonResponse:
    message = "No such endpoint. Paths end with a slash; /api/docs/ lists them."
    return JsonResponse({"detail": message}, status=404)
