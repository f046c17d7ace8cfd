"""Real Celery workers on the real `gpu` queue, for the benchmark worker tests.

Benchmark tasks go to the queue named `gpu` (CELERY_TASK_ROUTES in settings), a name other test
runs on the same Redis would share; so each test puts every Redis key of the broker under a
prefix of its own (kombu's `global_keyprefix`), keeping the real queue name and the real routing.
Worker subprocesses get the same prefix through tests.modelzoo.isolated_celery.
"""

import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
# In the kill test, a message a dead worker took comes back after this long rather than kombu's
# hour, so the test sees the killed worker's message delivered again, and refused by the claim.
VISIBILITY_TIMEOUT_SECONDS = 3


def new_key_prefix() -> str:
    return f"test-benchmark-{uuid.uuid4().hex[:12]}:"


def transport_options(prefix: str, *, redeliver_soon: bool = False) -> dict:
    options = {"global_keyprefix": prefix}
    return options | {"visibility_timeout": VISIBILITY_TIMEOUT_SECONDS} if redeliver_soon else options


@contextmanager
def app_on_isolated_broker(app, prefix: str, *, redeliver_soon: bool = False):
    """Point the app at the test broker under `prefix`; put everything back and remove the
    prefix's keys afterwards."""
    overrides = {
        "broker_url": BROKER_URL,
        "broker_transport_options": transport_options(prefix, redeliver_soon=redeliver_soon),
        "task_always_eager": False,
        "worker_enable_remote_control": False,
        "worker_hijack_root_logger": False,
    }
    previous_conf = {key: app.conf[key] for key in overrides}
    # app.amqp caches queues, router and producer pool, app._pool the connection pool: drop both
    # so that they are rebuilt for the test broker, and restore them afterwards.
    previous_amqp = app.__dict__.pop("amqp", None)
    previous_pool, app._pool = app._pool, None
    app.conf.update(overrides)
    try:
        yield
    finally:
        if app._pool is not None:
            app._pool.force_close_all()
        app.conf.update(previous_conf)
        app.__dict__.pop("amqp", None)
        if previous_amqp is not None:
            app.__dict__["amqp"] = previous_amqp
        app._pool = previous_pool
        delete_keys(prefix)


def delete_keys(prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(BROKER_URL)
    keys = list(client.scan_iter(match=f"{prefix}*"))
    if keys:
        client.delete(*keys)
    client.close()


def wait_for(check, *, timeout: float, what: str, every: float = 0.1):
    """check() until it returns something true; fail after `timeout` seconds, saying `what`."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"after {timeout} s: still waiting for {what}")
        time.sleep(every)


ROOT = Path(__file__).resolve().parents[2]


class Workers:
    """`celery worker -Q <queue>` processes (prefork, one child) on the test database and broker, each
    in its own process group, so that a test can kill one whole, as a lost machine would."""

    def __init__(self, env: dict, logs: Path, *, queue: str):
        self.env, self.logs, self.queue, self.running = env, logs, queue, []

    def start(self, name: str) -> subprocess.Popen:
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "tests.modelzoo.isolated_celery",
            "worker",
            "-Q",
            self.queue,
            "--pool",
            "prefork",
            "--concurrency",
            "1",
            "--prefetch-multiplier",
            "1",
            "--hostname",
            f"{name}@%h",
            "--loglevel",
            "INFO",
            "--without-mingle",
            "--without-gossip",
        ]
        with (self.logs / f"{name}.log").open("w") as log:
            process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.running.append(process)
        return process

    def kill(self, process: subprocess.Popen) -> None:
        os.killpg(process.pid, signal.SIGKILL)  # the worker and its child, with no chance to clean up
        process.wait(timeout=30)

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text()

    def stop_all(self) -> None:
        for process in self.running:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.running:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
