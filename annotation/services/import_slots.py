"""How many imports one user may have under way at once (IMPORT_MAX_CONCURRENT_PER_USER).

Under way: an upload being received or imported (an ImportSlot, held while its request runs), and
a corpus import job queued or running. Each import holds temporary disk (annotation/uploads.py
bounds one request's) and a worker or a web process, so one user cannot take them all by sending
uploads side by side.

Taking a slot locks the user's row first, so that two requests of one user count each other
(PostgreSQL; SQLite's writers take turns anyway). The slot is committed at once, outside the
import's own transaction, so that other requests see it, and deleted when the request ends. A slot
whose request died with its process is forgotten after STALE_AFTER.
"""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotation.models import ImportJob, ImportSlot
from annotation.models.background_job import BackgroundJob

SETTING = "IMPORT_MAX_CONCURRENT_PER_USER"
# Longer than any upload takes (4 GiB at 10 Mbit/s: under an hour) and its import.
STALE_AFTER = timedelta(hours=6)


class ImportsBusy(Exception):
    """The user has as many imports under way as they may."""


def imports_under_way(*, user) -> int:
    slots = ImportSlot.objects.filter(user=user, started_at__gte=timezone.now() - STALE_AFTER).count()
    unfinished = [BackgroundJob.Status.QUEUED, BackgroundJob.Status.RUNNING]
    return slots + ImportJob.objects.filter(created_by=user, status__in=unfinished).count()


def import_slot_take(*, user, what: str) -> ImportSlot:
    """A slot for one import, or ImportsBusy naming the limit."""
    limit = settings.IMPORT_MAX_CONCURRENT_PER_USER
    with transaction.atomic():
        list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk", flat=True))
        ImportSlot.objects.filter(user=user, started_at__lt=timezone.now() - STALE_AFTER).delete()
        busy = imports_under_way(user=user)
        if busy >= limit:
            raise ImportsBusy(
                f"you have {busy} import(s) under way; at most {limit} at once ({SETTING}): "
                "try again when one has finished"
            )
        return ImportSlot.objects.create(user=user, what=what[:100])


def import_slot_release(*, slot: ImportSlot) -> None:
    ImportSlot.objects.filter(pk=slot.pk).delete()
