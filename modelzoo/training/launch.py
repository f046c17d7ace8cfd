"""A benchmark run on several devices of this machine: torchrun (torch.distributed.run, PyTorch's
own launcher) starts one process per device running modelzoo.training.rank, which calls
run_benchmark inside the process group. Pure: no Django here; the GPU worker's task calls
`launch_benchmark` and gives it its progress writer and stop checks.

What passes between this process and the ranks, through `workdir`:
- launch.json: run_benchmark's arguments (written here);
- events.jsonl: rank 0's progress lines and heartbeats (read here, as they come);
- result.json: rank 0's result, written once, when the run is done;
- error-<rank>.json: why a rank stopped (a refusal the user should read, or a crash);
- rank-<rank>.pid: each rank's process, so that none outlives the run.

Stopping: on cancel, or when this process's own claim on the run is gone, torchrun gets SIGTERM
and stops its ranks itself (then SIGKILL, after STOP_GRACE_SECONDS); torchrun also stops every rank
as soon as one fails. torchrun dies with this process (PR_SET_PDEATHSIG), and each rank with
torchrun, so a worker killed outright leaves no training process behind either.
"""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from modelzoo.training.checkpoints import CheckpointMissing
from modelzoo.training.detectors.base import Cancelled, Progress

POLL_SECONDS = 0.5
STOP_GRACE_SECONDS = 30
CANCEL_CHECK_SECONDS = 2.0
RANK_MODULE = "modelzoo.training.rank"


class RanksFailed(RuntimeError):
    """A rank crashed, or was killed (`lost`: by a signal, e.g. the out-of-memory killer)."""

    def __init__(self, message: str, *, lost: bool):
        super().__init__(message)
        self.lost = lost


def launch_benchmark(
    *,
    benchmark: dict,
    devices: int,
    workdir: Path,
    progress: Progress,
    heartbeat: Callable[[], bool],
    cancel_requested: Callable[[], bool],
) -> dict:
    """run_benchmark(**benchmark) on `devices` ranks; rank 0's result. `heartbeat()` is called
    whenever rank 0 was heard from (it refreshes the run's heartbeat and says whether to stop),
    `cancel_requested()` every few seconds in between: a silent rank 0 leaves the run silent, and
    the stale-job sweep takes it back. Raises Cancelled, CheckpointMissing, ValueError (a refusal:
    the set or the setting does not fit), or RanksFailed."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec = workdir / "launch.json"
    spec.write_text(json.dumps({"benchmark": benchmark, "workdir": str(workdir)}))
    events = EventTail(workdir / "events.jsonl")
    with (workdir / "torchrun.log").open("w") as log:
        process = subprocess.Popen(
            torchrun_command(devices, spec),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=rank_environment(),
        )
    try:
        _follow(process, events, progress, heartbeat, cancel_requested)
    finally:
        stop_ranks(process, workdir)
    if process.returncode != 0:
        raise _failure(workdir, process.returncode)
    return json.loads((workdir / "result.json").read_text())


def torchrun_command(devices: int, spec: Path) -> list[str]:
    """--standalone: a rendezvous on this machine, on a free port; --max-restarts 0: a failed rank
    fails the attempt (the job runner decides about another)."""
    return [
        sys.executable,
        "-m",
        "modelzoo.training.agent",
        "--standalone",
        "--nnodes",
        "1",
        "--nproc-per-node",
        str(devices),
        "--max-restarts",
        "0",
        "--monitor-interval",
        "0.5",
        "-m",
        RANK_MODULE,
        str(spec),
    ]


def rank_environment() -> dict:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's default too; said here to keep its warning out of the log
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _follow(process, events, progress, heartbeat, cancel_requested) -> None:
    asked = time.monotonic()
    while True:
        heard = False
        for event in events.new():
            heard = True
            if "phase" in event:
                progress(event["phase"], event["done"], event["total"])
        finished = process.poll() is not None
        if heard:
            stop, asked = heartbeat(), time.monotonic()
        elif time.monotonic() - asked >= CANCEL_CHECK_SECONDS:
            stop, asked = cancel_requested(), time.monotonic()
        else:
            stop = False
        if stop:
            raise Cancelled("stopped on request")
        if finished:
            return
        time.sleep(POLL_SECONDS)


class EventTail:
    """The complete lines appended to a JSON-lines file since the last call."""

    def __init__(self, path: Path):
        self.path, self.offset = path, 0

    def new(self) -> list[dict]:
        if not self.path.exists():
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        return [json.loads(line) for line in complete.splitlines() if line.strip()]


def stop_ranks(process: subprocess.Popen, workdir: Path) -> None:
    """torchrun stopped (SIGTERM: it stops its ranks; SIGKILL after the grace), then any rank
    still alive killed: whatever happened, no rank outlives the attempt."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    for pid in rank_pids(workdir):
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.kill(pid, signal.SIGKILL)


def rank_pids(workdir: Path) -> list[int]:
    """The ranks of this attempt still running (a recorded pid whose command line is a rank's)."""
    alive = []
    for path in workdir.glob("rank-*.pid"):
        pid = int(path.read_text())
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue  # gone (or not Linux, where torchrun's own stop is all there is)
        if RANK_MODULE.encode() in command and str(workdir).encode() in command:
            alive.append(pid)
    return alive


def _failure(workdir: Path, returncode: int) -> Exception:
    reports = [json.loads(path.read_text()) for path in sorted(workdir.glob("error-*.json"))]
    for kind, error in (("checkpoint", CheckpointMissing), ("refused", ValueError)):
        for report in reports:
            if report["kind"] == kind:
                return error(report["message"])
    # A rank killed by a signal comes first: the others' errors (a broken connection) follow from it.
    killed = _killed_ranks(workdir)
    if killed or not reports:
        return RanksFailed(f"a training process died ({killed or f'torchrun exit status {returncode}'})", lost=True)
    report = reports[0]
    return RanksFailed(f"rank {report['rank']} crashed: {report['message']}", lost=False)


def _killed_ranks(workdir: Path) -> str:
    """From torchrun's failure summary ("rank : 1 (local_rank: 1)", "exitcode : -9 (pid: ...)"):
    the ranks that a signal ended, e.g. "rank 1: signal 9 (SIGKILL)"."""
    text = (workdir / "torchrun.log").read_text(errors="replace")
    found = {
        (int(rank), int(number)) for rank, number in re.findall(r"rank\s*:\s*(\d+).*?\n\s*exitcode\s*:\s*-(\d+)", text)
    }
    # torchrun stops the survivors with SIGTERM: those are not the cause, unless nothing else is
    causes = {(rank, number) for rank, number in found if number != signal.SIGTERM} or found
    return ", ".join(f"rank {rank}: signal {number} ({_signal_name(number)})" for rank, number in sorted(causes))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown"
