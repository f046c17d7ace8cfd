import os
import threading

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("emphasis")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Every worker sweeps for jobs whose worker died, in a thread of its main process, rather than
# Celery beat: `make run` and compose.yaml start no beat, and one beat for all workers would be one
# more process to keep alive. Sweeps of several workers at once are harmless (annotation.shared.jobs).
_sweep_stopped = threading.Event()


@worker_ready.connect
def _sweep_stale_jobs(**_) -> None:
    from annotation.shared.jobs import jobs_sweep_periodically, stale_jobs_requeue_every_kind

    # A worker that starts after a crash picks up what the crashed one left running, at once.
    stale_jobs_requeue_every_kind()
    _sweep_stopped.clear()
    threading.Thread(
        target=jobs_sweep_periodically, args=(_sweep_stopped,), name="stale-job sweep", daemon=True
    ).start()
    # The studies running on Prolific: their status mirrored, their places grown (prolific.services.studies).
    from prolific.services.studies import prolific_follow_periodically

    threading.Thread(
        target=prolific_follow_periodically, args=(_sweep_stopped,), name="prolific follow", daemon=True
    ).start()
    _poll_prolific(_sweep_stopped)


def _poll_prolific(stopped: threading.Event) -> None:
    # Prolific's submission statuses, as the sweep: a thread of every worker (issue 22).
    from django.conf import settings

    from prolific.services.submissions import prolific_submissions_poll_periodically

    if settings.PROLIFIC_POLL_SECONDS > 0:
        threading.Thread(
            target=prolific_submissions_poll_periodically, args=(stopped,), name="Prolific poll", daemon=True
        ).start()


@worker_shutdown.connect
def _stop_sweeping(**_) -> None:
    _sweep_stopped.set()
