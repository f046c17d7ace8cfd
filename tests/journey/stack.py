"""The platform served as a deployment serves it, for the journey test: `collectstatic` and
granian as docker/compose.yaml and docker/web.sh run them (DEBUG off), a Celery worker on the
default queue and a GPU worker on `gpu` with the flags of docker/Dockerfile.gpu, all on Redis and
on the test's PostgreSQL database. Each is a process of its own; their logs are kept under the
test's tmp folder and their tails are shown when something fails to start."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = "tests.journey.settings"


@dataclass
class Stack:
    url: str
    data_dir: Path
    logs: Path

    def log_tails(self, lines: int = 40) -> str:
        parts = []
        for log in sorted(self.logs.glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {log.name} ---\n" + "\n".join(tail))
        return "\n".join(parts)


def database_url(settings_dict: dict) -> str:
    """The URL of the database Django's test runner made (test_<name>), for the other processes."""
    user, password = settings_dict.get("USER") or "", settings_dict.get("PASSWORD") or ""
    credentials = f"{user}:{password}@" if password else f"{user}@" if user else ""
    host, port = settings_dict.get("HOST") or "127.0.0.1", settings_dict.get("PORT") or 5432
    return f"postgres://{credentials}{host}:{port}/{settings_dict['NAME']}"


def environment(*, database: str, broker: str, data_dir: Path) -> dict[str, str]:
    """What an operator sets (README "Settings"): a server database, a real broker, DEBUG off."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "CELERY_"))}
    return env | {
        "DJANGO_SETTINGS_MODULE": SETTINGS,
        "JOURNEY_BROKER_KEY_PREFIX": f"journey-{uuid.uuid4().hex[:12]}:",
        "DATABASE_URL": database,
        "CELERY_BROKER_URL": broker,
        "SECRET_KEY": uuid.uuid4().hex + uuid.uuid4().hex,
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATA_DIR": str(data_dir),
        "STORAGE_BACKEND": "local",
        "LOG_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
    }


@contextmanager
def served(*, database: str, broker: str, scratch: Path):
    """collectstatic, then granian, the default-queue worker and the GPU worker; stopped afterwards."""
    data_dir, logs = scratch / "data", scratch / "logs"
    data_dir.mkdir(parents=True)
    logs.mkdir()
    env = environment(database=database, broker=broker, data_dir=data_dir)
    stack = Stack(url="", data_dir=data_dir, logs=logs)
    collect = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if collect.returncode:
        raise RuntimeError(f"collectstatic failed:\n{collect.stdout}{collect.stderr}")
    port = _free_port()
    with ExitStack() as processes:
        web = processes.enter_context(
            _process(
                "granian",
                [
                    sys.executable,
                    "-m",
                    "granian",
                    "--interface",
                    "wsgi",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--no-ws",
                    "--workers",
                    "2",
                    "--blocking-threads",
                    "4",
                    "--respawn-failed-workers",
                    "config.wsgi:application",
                ],
                env,
                logs,
            )
        )
        workers = [
            processes.enter_context(
                _process(
                    "worker",
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "config",
                        "worker",
                        "-Q",
                        "celery",
                        "--concurrency",
                        "1",
                        "--hostname",
                        "journey-worker@%h",
                        "--without-mingle",
                        "--without-gossip",
                        "--loglevel",
                        "WARNING",
                    ],
                    env,
                    logs,
                )
            ),
            processes.enter_context(
                _process(
                    "gpu-worker",
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "config",
                        "worker",
                        "-Q",
                        "gpu",
                        "--concurrency",
                        "1",
                        "--hostname",
                        "journey-gpu@%h",
                        "--prefetch-multiplier",
                        "1",
                        "--max-tasks-per-child",
                        "1",
                        "--without-mingle",
                        "--without-gossip",
                        "--loglevel",
                        "WARNING",
                    ],
                    env,
                    logs,
                )
            ),
        ]
        stack.url = f"http://127.0.0.1:{port}"
        _wait_until_serving(stack, web, workers)
        try:
            yield stack
        finally:
            if _failed(web, workers):
                print(stack.log_tails())


def _failed(web, workers) -> bool:
    return any(process.poll() not in (None, 0) for process in (web, *workers))


@contextmanager
def _process(name: str, command: list[str], env: dict, logs: Path):
    with (logs / f"{name}.log").open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 (the server dies with the test process)
            start_new_session=True,
        )
    try:
        yield process
    finally:
        _stop(process)


def _stop(process: subprocess.Popen) -> None:
    """TERM to the process group (a worker's pool children, granian's workers), KILL after 20 s."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _die_with_parent() -> None:
    """In the child: SIGTERM when the test process dies, even by SIGKILL (Linux PR_SET_PDEATHSIG)."""
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGTERM)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_until_serving(stack: Stack, web: subprocess.Popen, workers: list[subprocess.Popen]) -> None:
    """Until the login page answers (each granian worker loads Django at its first request)."""
    deadline, last = time.monotonic() + 120, None
    while time.monotonic() < deadline:
        if _failed(web, workers) or web.poll() is not None:
            raise RuntimeError(f"a process of the stack exited:\n{stack.log_tails()}")
        try:
            with urllib.request.urlopen(f"{stack.url}/admin/login/", timeout=30) as reply:
                if reply.status == 200:
                    return
        except OSError as error:
            last = error
            time.sleep(0.2)
    raise RuntimeError(f"granian did not answer within 120 s ({last!r}):\n{stack.log_tails()}")
