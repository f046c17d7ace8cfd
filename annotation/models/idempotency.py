"""What an API create answered, kept under the caller's `Idempotency-Key` (annotation/shared/api/idempotency.py)."""

from django.conf import settings
from django.db import models


class ApiIdempotencyKey(models.Model):
    """One create through the API with an Idempotency-Key header: the request's hash and the
    response it got, written in the create's own transaction. A retry with the same key, method and
    path answers this response again; the same key with another body is refused (422)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    request_hash = models.CharField(max_length=64, help_text="SHA-256 of the request's body (files by content).")
    status_code = models.PositiveSmallIntegerField()
    body = models.JSONField(null=True, blank=True)
    location = models.CharField(max_length=1000, blank=True, help_text="The first response's Location header.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key", "method", "path"], name="api_idempotency_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.key})"
