"""The embedded broker of `make run` keeps all its files in DATA_DIR, so a run leaves nothing
in the working directory (kombu's file-system transport puts its exchange table in a folder
named `control` in the working directory unless told otherwise)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_worker_on_the_embedded_broker_writes_only_under_the_data_folder(tmp_path):
    workdir, data_dir = tmp_path / "workdir", tmp_path / "data"
    workdir.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(ROOT),
        "DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "t",
    }
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel=INFO", "--concurrency=1"],
            cwd=workdir,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while " ready." not in log.read_text():
            assert worker.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)

    assert list(workdir.iterdir()) == []
    assert any((data_dir / "celery" / "control").iterdir())  # the exchange table, where it belongs
