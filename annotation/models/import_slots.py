"""An upload being received or imported, held by its user while the request runs
(annotation.services.import_slots): what limits the imports one user has under way at once."""

from django.conf import settings
from django.db import models


class ImportSlot(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    what = models.CharField(max_length=100, help_text="The request, e.g. POST /api/v1/dataset-imports/.")
    started_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["user", "started_at"], name="import_slot_user")]

    def __str__(self) -> str:
        return f"{self.what} by user {self.user_id}"
