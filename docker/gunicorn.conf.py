"""Gunicorn settings for the container (the CMD of docker/Dockerfile).

Every value can be overridden without rebuilding: WEB_CONCURRENCY and
GUNICORN_THREADS below, anything else with GUNICORN_CMD_ARGS (for example
GUNICORN_CMD_ARGS="--timeout 300"), which gunicorn reads itself.
"""

import os

bind = "0.0.0.0:8000"

# gthread rather than the sync workers: a slow client uploading a large corpus
# archive (up to IMPORT_MAX_ARCHIVE_BYTES) ties up one thread instead of a whole
# worker, and the worker keeps reporting to the arbiter meanwhile, so the upload
# is not killed after `timeout` seconds.
worker_class = "gthread"


def _cpus() -> int:
    # The CPUs this container may run on (honours --cpuset-cpus; a CPU quota
    # set with --cpus is not visible here, so set WEB_CONCURRENCY for that).
    return len(os.sched_getaffinity(0)) or 1


# The usual 2 x CPUs + 1, capped: each worker holds its own copy of Django and
# its imports, and heavy work runs on the Celery workers, not here.
workers = int(os.environ.get("WEB_CONCURRENCY") or min(2 * _cpus() + 1, 8))
threads = int(os.environ.get("GUNICORN_THREADS") or 4)

timeout = 120
graceful_timeout = 30
keepalive = 5

# Recycle workers now and then, so that a slow leak cannot grow without bound.
max_requests = 2000
max_requests_jitter = 200

# The heartbeat file lives in memory: on the container's overlay file system the
# fchmod gunicorn uses for it can block (see gunicorn's "Blocking os.fchmod" FAQ).
worker_tmp_dir = "/dev/shm"

accesslog = "-"
errorlog = "-"
