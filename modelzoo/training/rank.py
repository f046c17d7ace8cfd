"""One rank of a multi-device benchmark run, started by torchrun (see modelzoo.training.launch):

    python -m modelzoo.training.rank <workdir>/launch.json

Every rank calls run_benchmark inside the process group; rank 0 alone reports progress and
heartbeats (events.jsonl) and writes the result (result.json) and the trained detector. A rank that
stops on an error says why in error-<rank>.json, and exits non-zero: torchrun then stops the others.
"""

import ctypes
import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

PR_SET_PDEATHSIG = 1
HEARTBEAT_SECONDS = 1.0


def die_with_parent(sig: int) -> None:
    """Linux: this process gets `sig` when the process that started it dies."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig))


class Events:
    """Rank 0's side of events.jsonl: progress(phase, done, total), and should_stop() as a
    heartbeat (asked at every step; it never stops the run: cancelling is torchrun's SIGTERM)."""

    def __init__(self, path: Path):
        self.path, self.beaten_at = path, 0.0

    def write(self, event: dict) -> None:
        with self.path.open("a") as handle:
            handle.write(json.dumps(event) + "\n")

    def progress(self, phase: str, done: int, total: int) -> None:
        self.write({"phase": phase, "done": done, "total": total})
        self.beaten_at = time.monotonic()

    def should_stop(self) -> bool:
        if time.monotonic() - self.beaten_at >= HEARTBEAT_SECONDS:
            self.write({"beat": time.time()})
            self.beaten_at = time.monotonic()
        return False


def write_atomically(path: Path, text: str) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(text)
    partial.replace(path)


def main(spec_path: str) -> int:
    die_with_parent(signal.SIGKILL)  # torchrun gone: nobody is left to stop this rank
    # imported after the death signal is set: loading torch and transformers takes seconds
    from modelzoo.training import distributed
    from modelzoo.training.alignment import AlignmentFailed, WordTimesMissing
    from modelzoo.training.benchmark import run_benchmark
    from modelzoo.training.checkpoints import CheckpointMissing

    spec = json.loads(Path(spec_path).read_text())
    workdir, benchmark = Path(spec["workdir"]), spec["benchmark"]
    rank = int(os.environ.get("RANK", "0"))
    (workdir / f"rank-{rank}.pid").write_text(str(os.getpid()))
    events = Events(workdir / "events.jsonl") if rank == 0 else None
    try:
        distributed.start((benchmark.get("config") or {}).get("device", "auto"))
        result = run_benchmark(
            **benchmark,
            progress=events.progress if events else None,
            should_stop=events.should_stop if events else None,
        )
    except CheckpointMissing as error:
        return _stopped(workdir, rank, "checkpoint", str(error))
    except (WordTimesMissing, AlignmentFailed, ValueError) as error:
        return _stopped(workdir, rank, "refused", str(error))
    except Exception as error:
        traceback.print_exc()
        return _stopped(workdir, rank, "crashed", repr(error))
    if rank == 0:
        write_atomically(workdir / "result.json", json.dumps(result))
    distributed.stop()
    return 0


def _stopped(workdir: Path, rank: int, kind: str, message: str) -> int:
    write_atomically(workdir / f"error-{rank}.json", json.dumps({"rank": rank, "kind": kind, "message": message}))
    return 1


if __name__ == "__main__":
    status = main(sys.argv[1])
    from modelzoo.training.distributed import exit_rank

    exit_rank(status)
