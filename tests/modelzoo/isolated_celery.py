"""The project's Celery app (config.celery) for worker subprocesses of the tests, with its Redis
keys under TEST_BROKER_KEY_PREFIX (see tests/modelzoo/gpu_worker.py):

    celery -A tests.modelzoo.isolated_celery worker -Q gpu ...

Everything else, the `gpu` routing and the worker_ready sweep of stale jobs included, is the
project's own configuration.
"""

import os

from config.celery import app
from tests.modelzoo.gpu_worker import transport_options

app.conf.broker_transport_options = transport_options(os.environ["TEST_BROKER_KEY_PREFIX"], redeliver_soon=True)

__all__ = ["app"]
