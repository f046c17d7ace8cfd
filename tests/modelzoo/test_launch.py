"""modelzoo.training.launch: torchrun with 2 CPU ranks stopped cleanly on cancel (no rank left
running), and how a failed attempt is read back (a refusal, a killed rank, a crash)."""

import json
import time

import pytest

pytest.importorskip("torch")

from modelzoo.training.checkpoints import CheckpointMissing
from modelzoo.training.detectors.base import Cancelled
from modelzoo.training.launch import RanksFailed, _failure, launch_benchmark, rank_pids
from tests.modelzoo.helpers import TINY_WHISPER


def test_cancelling_stops_every_rank(export_folder, checkpoint_dir, tmp_path):
    workdir, seen = tmp_path / "ranks", []

    def progress(phase, done, total):
        seen.append(phase)
        if phase.startswith("training"):
            seen.append(rank_pids(workdir))  # both ranks, running

    benchmark = {
        "folder": str(export_folder),
        "detector": "whisper-tokens",
        "setting": {"kind": "multilingual"},
        "checkpoint_dir": str(checkpoint_dir),
        "backbone": TINY_WHISPER,
        "output_dir": str(workdir / "model"),
        "config": {"epochs": 50, "batch_size": 2, "device": "cpu"},
        "resamples": 10,
    }
    started = time.monotonic()
    with pytest.raises(Cancelled):
        launch_benchmark(
            benchmark=benchmark,
            devices=2,
            workdir=workdir,
            progress=progress,
            heartbeat=lambda: any(phase == "training: epoch 1/50" for phase in seen if isinstance(phase, str)),
            cancel_requested=lambda: False,
        )
    running = next(item for item in seen if isinstance(item, list))
    assert len(running) == 2
    assert rank_pids(workdir) == []  # none left
    assert not (workdir / "result.json").exists() and time.monotonic() - started < 200


def _attempt(tmp_path, log: str, errors: list[dict]):
    (tmp_path / "torchrun.log").write_text(log)
    for error in errors:
        (tmp_path / f"error-{error['rank']}.json").write_text(json.dumps(error))
    return _failure(tmp_path, 1)


SUMMARY = """Root Cause (first observed failure):
[0]:
  time      : 2026-12-02_01:34:52
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 32150)
  error_file: <N/A>
[1]:
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 32149)
"""


def test_a_failed_attempt_says_why(tmp_path):
    refused = _attempt(tmp_path / "a", "", [{"rank": 0, "kind": "refused", "message": "no clips of xx"}])
    assert type(refused) is ValueError and str(refused) == "no clips of xx"
    missing = _attempt(tmp_path / "b", "", [{"rank": 1, "kind": "checkpoint", "message": "no whisper-small"}])
    assert isinstance(missing, CheckpointMissing)
    # rank 1 killed; rank 0, stopped by torchrun, had reported the broken connection first
    killed = _attempt(tmp_path / "c", SUMMARY, [{"rank": 0, "kind": "crashed", "message": "Connection reset"}])
    assert isinstance(killed, RanksFailed) and killed.lost
    assert str(killed) == "a training process died (rank 1: signal 9 (SIGKILL))"
    crashed = _attempt(tmp_path / "d", "exitcode  : 1", [{"rank": 1, "kind": "crashed", "message": "KeyError('x')"}])
    assert isinstance(crashed, RanksFailed) and not crashed.lost and str(crashed) == "rank 1 crashed: KeyError('x')"


@pytest.fixture(autouse=True)
def _folders(tmp_path):
    for name in "abcd":
        (tmp_path / name).mkdir()
