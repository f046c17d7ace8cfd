"""The project's Celery app (config.celery) for worker subprocesses of the tests, with its Redis
keys under TEST_BROKER_KEY_PREFIX (see tests/modelzoo/gpu_worker.py):

    celery -A tests.modelzoo.isolated_celery worker -Q gpu ...

Everything else, the `gpu` routing and the sweeps of stale jobs included, is the project's own
configuration. TEST_JOB_TIMINGS="<heartbeat>,<sweep>,<stale after>" (seconds) shortens the job
runner's heartbeat and sweep intervals and the benchmark runs' STALE_AFTER, so that a test sees a
dead worker's run queued again in seconds rather than minutes.
"""

import os
from datetime import timedelta

from celery.signals import worker_init

from config.celery import app
from tests.modelzoo.gpu_worker import transport_options

app.conf.broker_transport_options = transport_options(os.environ["TEST_BROKER_KEY_PREFIX"], redeliver_soon=True)


@worker_init.connect
def _shorten_timings(**_) -> None:
    # In the worker's main process before its pool starts: the sweep reads these there, and the
    # pool's processes (forked from it) inherit them.
    if not os.environ.get("TEST_JOB_TIMINGS"):
        return
    import django

    django.setup()
    from annotation.shared import jobs
    from modelzoo.models import BenchmarkRun

    heartbeat, sweep, stale = (float(value) for value in os.environ["TEST_JOB_TIMINGS"].split(","))
    jobs.HEARTBEAT_SECONDS, jobs.SWEEP_SECONDS = heartbeat, sweep
    BenchmarkRun.STALE_AFTER = timedelta(seconds=stale)


__all__ = ["app"]
