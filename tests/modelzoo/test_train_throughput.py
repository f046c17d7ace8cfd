"""bench/train_throughput.py still runs, at tiny size on the CPU (the real-size run needs CUDA),
and says so; it prints the project's training and inference against a plain Hugging Face step,
the Whisper detector's feature cache, an end-to-end run_benchmark of each detector; its scaling
part trains in 1 and then 2 torchrun ranks (gloo). And bench/whisper_loader_profile.py runs."""

import os
import re
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
            "--e2e-clips",
            "20",
            "--e2e-epochs",
            "2",
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
    assert "no GPU: tiny CPU configurations; the real-size figures need CUDA" in result.stdout
    assert "frame-classifier scaling (torchrun, DDP, data loading included):" in result.stdout
    assert "reference (plain Hugging Face step, fixed size): training " in result.stdout
    assert "frame-classifier (tiny Wav2Vec2, 4 clips a step, 3 steps an update):" in result.stdout  # MMEE's 8 x 3
    summary = lines[-1]
    assert summary.startswith("summary: whisper-tokens train ") and summary.endswith("[tiny, cpu]")
    assert "frame-classifier 2 ranks " in summary and " x 1 rank" in summary
    for kind in ("whisper-tokens", "frame-classifier"):
        assert re.search(
            kind + r" train [\d.]+ clips/s \(bare step [\d.]+, \d+% of it; waiting for data \d+%; "
            r"[\d.]+x the reference [\d.]+\), inference [\d.]+ clips/s \([\d.]+x the reference",
            summary,
        )
    assert re.search(r"from cached states [\d.]+ clips/s \([\d.]+x the reference\)", summary)
    for run in (
        "whisper-tokens end to end (feature cache off)",
        "whisper-tokens end to end (feature cache auto)",
        "frame-classifier end to end",
    ):
        assert re.search(re.escape(run) + r" [\d.]+ s an epoch, \d+% outside training steps, peak resident", summary)
    assert "outside training steps, s: validation" in result.stdout and "feature cache: 18 clips" in result.stdout


def test_the_whisper_loader_profile_runs():
    result = subprocess.run(
        [
            sys.executable,
            str(BENCH.parent / "whisper_loader_profile.py"),
            "--clips",
            "16",
            "--batch",
            "4",
            "--workers",
            "1",
            "--repeats",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    # 4 clips of ~5 s: 30 s windows of 80 x 3000 float32 before; their frames, up to whole seconds, after
    found = re.match(r"summary: whisper loader, batch 4 of ~([\d.]+) s clips: 3\.8 -> ([\d.]+) MB a batch", summary)
    seconds, after = float(found[1]), float(found[2])
    assert 3.8 * seconds / 30 < after < 3.8 * (seconds + 1) / 30 + 0.1  # + the tokens, and rounding
    assert "loader with 1 workers" in summary and summary.endswith("[cpu]")
