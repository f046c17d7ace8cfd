"""bench/train_throughput.py still runs, at tiny size on the CPU (the real-size run needs CUDA),
and says so; its scaling part trains in 1 and then 2 torchrun ranks (gloo)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

BENCH = Path(__file__).resolve().parents[2] / "bench" / "train_throughput.py"


def test_the_throughput_bench_runs_at_tiny_size():
    result = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--size",
            "tiny",
            "--clips",
            "4",
            "--steps",
            "1",
            "--seconds",
            "1.5",
            "--ranks",
            "2",
            "--scaled",
            "frame-classifier",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("size: tiny;")
    for text in (
        "whisper-tokens (tiny Whisper",
        "frame-classifier (tiny Wav2Vec2",
        "bare model step:",
        "waiting for data",
    ):
        assert text in result.stdout
    assert "no GPU: these are tiny CPU configurations" in result.stdout
    assert "frame-classifier scaling (torchrun, DDP, data loading included):" in result.stdout
    assert lines[-1].startswith("summary: whisper-tokens train ") and lines[-1].endswith("[tiny, cpu]")
    assert "frame-classifier 2 ranks " in lines[-1] and " x 1 rank" in lines[-1]
