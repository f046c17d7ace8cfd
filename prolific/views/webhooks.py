"""Prolific's webhooks in: POST /prolific/webhooks/ (docs/operations.md "Prolific webhooks").

No login and no CSRF token: Prolific signs each request instead, and prolific.services.webhooks
refuses any it did not sign before anything is written, acknowledges a repeat of an event without
acting again, and stores a new one with the job that acts on it: the answer comes at once.
"""

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from prolific.services.webhooks import prolific_webhook_receive


@csrf_exempt
@require_POST
def prolific_webhook(request: HttpRequest) -> JsonResponse:
    answer = prolific_webhook_receive(headers=request.headers, body=request.body)
    return JsonResponse({"detail": answer.message}, status=answer.status)
