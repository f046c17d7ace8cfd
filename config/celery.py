import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("emphasis")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _requeue_stale_jobs(**_) -> None:
    # A worker that starts after a crash picks up what the crashed one left running.
    from annotation.jobs import stale_jobs_requeue_every_kind

    stale_jobs_requeue_every_kind()
