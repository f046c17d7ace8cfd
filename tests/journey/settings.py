"""The project's settings (config.settings, read from the environment as in production), with every
Redis key of the Celery broker under a prefix of the journey's own: the web server and both
workers share the real queue names (`celery`, `gpu`) and routes, and other test runs on the same
Redis never see their messages."""

import os

from config.settings import *  # noqa: F403

CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": os.environ["JOURNEY_BROKER_KEY_PREFIX"]}
