"""Time `make run` on a fresh clone: seconds from the command to the demo page's 200.

    .venv/bin/python bench/first_start.py [--runs 3] [--load 0] [--cold-bytecode] [--rev HEAD]

Each run clones this repository at --rev (a commit before a change, to compare) into a temporary folder, links this
tree's `.venv` into the clone, and runs `make run` there with the install
skipped (`make -o`): installing needs PyPI and would write into the shared
venv, so what is timed is everything after the install. The demo page
(`/s/demo/`, redirects followed) is asked for every 0.2 s until it answers 200.

--cold-bytecode points PYTHONPYCACHEPREFIX at an empty folder, so that Python
compiles every module it imports, as on the first start after a fresh install
(uv does not compile .venv ahead). --load N runs N busy processes beside the
start, the "load N" of the target; the load average is printed either way,
since the machine may be shared. Targets (issue 33): at most 60 s on a quiet
two-core machine, 90 s at load 4.
"""

import argparse
import contextlib
import http.cookiejar
import multiprocessing
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UV_STAMP = re.compile(r"^UV_VERSION := (\S+)$", re.MULTILINE)
# The lines of make run's output that end a phase, in order, and the phase each ends.
MILESTONES = (
    ("Python and Django started", re.compile(r"^(Operations to perform|Demo database)")),
    ("database ready (migrations or the prebuilt copy)", re.compile(r"^Demo corpus")),
    ("demo seeded", re.compile(r"^Study 'Demo with a simulated crowd")),
    ("web server listening", re.compile(r"^Starting development server")),
)


def main() -> None:
    args = parse_args()
    print(f"{os.cpu_count()} cores; load average before: {load()}")
    totals = []
    with busy(args.load):
        for run in range(1, args.runs + 1):
            total, phases = timed_start(args.rev, cold=args.cold_bytecode, echo=args.echo)
            totals.append(total)
            marks = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases)
            print(f"run {run}: demo page after {total:.1f} s ({marks}); load average {load()}")
    print(
        f"first start to the demo page: median {statistics.median(totals):.1f} s over {len(totals)} run(s) "
        f"(min {min(totals):.1f}, max {max(totals):.1f}; --load {args.load}, "
        f"{'cold' if args.cold_bytecode else 'warm'} bytecode, {args.rev})"
    )


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--load", type=int, default=0, help="busy processes to run beside the start")
    parser.add_argument("--cold-bytecode", action="store_true", help="compile every module anew (fresh install)")
    parser.add_argument("--echo", action="store_true", help="print make run's output, each line with its second")
    parser.add_argument("--rev", default="HEAD", help="the commit to clone (committed work only)")
    return parser.parse_args()


def timed_start(rev: str, *, cold: bool, echo: bool) -> tuple[float, list[tuple[str, float]]]:
    with tempfile.TemporaryDirectory(prefix="bench-first-start-") as scratch:
        clone = Path(scratch) / "clone"
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True)
        commit = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True, check=True)
        subprocess.run(["git", "checkout", "--quiet", commit.stdout.strip()], cwd=clone, check=True)
        (clone / ".venv").symlink_to((ROOT / ".venv").resolve())
        env = dict(os.environ, PYTHONUNBUFFERED="1")  # each line as it is written, for the milestones
        env.pop("DATA_DIR", None)
        if cold:
            env["PYTHONPYCACHEPREFIX"] = str(Path(scratch) / "pycache")
        port = free_port()
        uv_version = UV_STAMP.search((clone / "Makefile").read_text()).group(1)
        command = ["make", "-o", ".venv/.synced-run", "-o", f".venv/.uv-{uv_version}", "run", f"PORT={port}"]
        started, cpu_before = time.monotonic(), _children_cpu()
        make = subprocess.Popen(
            command, cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        phases: list[tuple[str, float]] = []
        reader = threading.Thread(target=read_milestones, args=(make.stdout, started, phases, echo), daemon=True)
        reader.start()
        try:
            total = wait_for_demo_page(port, started, make)
        finally:
            os.killpg(make.pid, signal.SIGTERM)
            make.wait(timeout=60)
        phases.append(("CPU of its processes until stopped", _children_cpu() - cpu_before))
        return total, phases


def read_milestones(stream, started: float, phases: list, echo: bool) -> None:
    pending = list(MILESTONES)
    for line in stream:
        if echo:
            print(f"{time.monotonic() - started:7.1f} {line.rstrip()}")
        if pending and pending[0][1].search(line):
            phases.append((pending.pop(0)[0], time.monotonic() - started))


def wait_for_demo_page(port: int, started: float, make: subprocess.Popen) -> float:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    while True:
        if make.poll() is not None:
            sys.exit(f"make run ended (status {make.returncode}) before the demo page answered")
        with contextlib.suppress(OSError), opener.open(f"http://127.0.0.1:{port}/s/demo/", timeout=30) as page:
            if page.status == 200:
                return time.monotonic() - started
        time.sleep(0.2)


@contextlib.contextmanager
def busy(count: int):
    workers = [multiprocessing.Process(target=spin, daemon=True) for _ in range(count)]
    for worker in workers:
        worker.start()
    try:
        yield
    finally:
        for worker in workers:
            worker.terminate()


def spin() -> None:
    while True:
        pass


def _children_cpu() -> float:
    """User and system seconds of the children waited for (make, and through it every process of
    make run): the work a quiet machine would do, whatever else runs beside it."""
    times = os.times()
    return times.children_user + times.children_system


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
