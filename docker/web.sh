#!/bin/sh
# The container's web server: granian, serving config.wsgi (the CMD of docker/Dockerfile).
#
# Chosen by bench/annotate_load.py, run back to back on a 2-core machine: in the
# realistic mode granian served 875 participants with submit p99 <= 200 ms where
# gunicorn (4 gthread workers of 4 threads) served 750, and in the 64-participant
# hammer it accepted 249 submissions/s against gunicorn's 186, at 3.8 ms of web
# server CPU a submit against 5.4. It streams request bodies to the app (a 600 MB
# upload kept the worker at 67 MB), so corpus archives are not held in memory.
#
# One worker process a core: on the same machine, 2 workers of 4 blocking threads
# served 1250 realistic participants (web server 6.3 ms of CPU a submit, page loads
# included) where 4 workers served 1000 (7.0 ms); in the hammer 2 workers accepted
# 299-381 submissions/s over five runs (3.1-4.0 ms a submit, median 344/s) and 4
# workers 279-303 over three (4.0-4.1 ms). More processes than cores take turns.
#
# Sixteen blocking threads a worker (issue 35): a request holds its thread while it waits
# on PostgreSQL (a submit's commit flush) and for the GIL after each answer, so with 4
# threads a worker's requests queued in granian while its CPU sat mostly idle. In
# bench/annotate_load.py's realistic mode at 1000 participants on a shared 2-core machine,
# 4 threads: a slow submit (the slowest 1 %) spent 2.3-2.8 s of its 2.3-2.8 s outside the
# app, waiting for a thread, the workers at 0.24-0.30 cores each; 16 threads: 0.16-0.55 s
# there, submit p99 339-842 ms against 2157-2713 ms in the same hours (the machine's other
# work set the spread). Each thread keeps a PostgreSQL connection: 2 workers hold 32.
#
# WEB_CONCURRENCY (worker processes; default one a CPU, at most 8) and
# WEB_THREADS (blocking threads a worker, default 16) override the defaults; any other granian setting can be given as
# its GRANIAN_* environment variable (granian --help lists them).
set -eu

cpus=$(python -c 'import os; print(len(os.sched_getaffinity(0)) or 1)')
default_workers=$cpus
[ "$default_workers" -gt 8 ] && default_workers=8

exec granian --interface wsgi --host 0.0.0.0 --port 8000 --no-ws \
    --workers "${WEB_CONCURRENCY:-$default_workers}" \
    --blocking-threads "${WEB_THREADS:-16}" \
    --respawn-failed-workers \
    --workers-lifetime "${WEB_WORKERS_LIFETIME:-6h}" \
    --access-log \
    config.wsgi:application
