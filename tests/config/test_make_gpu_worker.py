"""`make gpu-worker` (Makefile): which CUDA build of torch it installs for the machine's GPU, as
`nvidia-smi` reports it, and what it runs after. Read from `make -n` (nothing is installed) with
a stand-in `nvidia-smi` on PATH."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def planned(tmp_path, *, compute_caps=None, variables=()):
    """The commands `make -n -B gpu-worker` would run (-B: as on a machine set up for nothing yet), with an nvidia-smi that reports these GPUs'
    compute capabilities (None: no nvidia-smi at all)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh", "awk", "sed", "env", "touch", "test"):  # what the Makefile's shell needs
        if found := shutil.which(tool):
            (bin_dir / tool).symlink_to(found)
    if compute_caps is not None:
        fake = bin_dir / "nvidia-smi"
        fake.write_text("#!/bin/sh\n" + "".join(f"echo {cap}\n" for cap in compute_caps))
        fake.chmod(0o755)
    environment = {**os.environ, "PATH": str(bin_dir)}
    environment.pop("TORCH_CUDA", None)
    make = shutil.which("make")
    done = subprocess.run(
        [make, "-n", "-B", "-C", str(ROOT), "gpu-worker", *variables], env=environment, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("compute_caps", "build"),
    [
        (["9.0"], "cu126"),  # H100, H200: Hopper
        (["8.0", "8.0"], "cu126"),  # A100
        (["10.0"], "cu130"),  # B200: Blackwell
        (["12.0"], "cu130"),  # RTX 50xx
        (None, "cpu"),  # a laptop: no NVIDIA driver
    ],
)
def test_torch_is_the_build_for_this_machines_gpu(tmp_path, compute_caps, build):
    commands = planned(tmp_path, compute_caps=compute_caps)

    assert f"--index-url https://download.pytorch.org/whl/{build} torch==" in commands
    assert f'"{build}" != "cpu" and not torch.cuda.is_available()' in commands  # the import check, for that build


def test_a_build_asked_for_wins_and_the_worker_takes_the_gpu_queue_after_the_backbones(tmp_path):
    commands = planned(tmp_path, compute_caps=["9.0"], variables=["TORCH_CUDA=cu130", "BACKBONES=tiny-random"])

    assert "download.pytorch.org/whl/cu130 torch==" in commands
    assert "sync --locked --inexact --extra zoo" in commands
    prepare = commands.index("manage.py backbones_prepare tiny-random")
    worker = commands.index("-m celery -A config worker -Q gpu --concurrency 1")
    assert prepare < worker
