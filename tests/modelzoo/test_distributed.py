"""Data parallel on the CPU: two gloo ranks started by torchrun train a tiny deterministic model to
the same weights as one process over the same global batches, with DDP's gradient exchange once
an update (none on the accumulation steps)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from tests.modelzoo.ddp_equality import train  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_two_gloo_ranks_reach_the_weights_of_one_process_over_the_same_global_batches(tmp_path):
    out = tmp_path / "two-ranks.pt"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        str(ROOT / "tests" / "modelzoo" / "ddp_equality.py"),
        str(out),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    finished = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]

    two = torch.load(out)
    one = train(world=1)
    assert two["updates"] == one["updates"] == 4 and two["batches"] == one["batches"] == 6
    assert two["exchanges"] == two["updates"]  # no_sync: no gradient exchange on the accumulation steps
    initial = train.__globals__["model"]().state_dict()
    for name, weights in one["state"].items():
        assert not torch.allclose(weights, initial[name])  # it did train
        torch.testing.assert_close(two["state"][name], weights, rtol=1e-5, atol=1e-6)
