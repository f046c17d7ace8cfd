"""bench/train_throughput.py's end-to-end mode: the real run_benchmark on a synthetic export, then
what the GPU worker does with its result (the predictions CSV, the checkpoint zip), timed, with
the peak memory of the device and of this process."""

import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import torch

from evaluation.reports.zip_archive import zip_folder
from modelzoo.results import predictions_csv
from modelzoo.training.benchmark import run_benchmark
from modelzoo.training.synthetic import synthetic_set, write_export_folder

# the phases of run_benchmark's seconds that are not training steps
OUTSIDE_STEPS = ("reading", "prediction", "scoring", "saving")


def export_folder(folder: Path, clips: int, seconds: float) -> Path:
    """`clips` synthetic clips of about `seconds` in two languages, split 80/10/10 per language."""
    words = max(2, round(seconds / 0.45))
    half = max(10, clips // 2)
    return write_export_folder(folder, synthetic_set(half, seed=5, languages=("en", "de"), words=words))


def end_to_end(kind: str, folder: Path, checkpoint_dir: Path, backbone: str, config: dict, device: str) -> dict:
    """One run_benchmark of `kind` on the export in `folder`, stored as the worker stores it."""
    cuda = device == "cuda"
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    with ResidentPeak() as resident, tempfile.TemporaryDirectory() as scratch:
        started = time.monotonic()
        result = run_benchmark(
            folder=folder,
            detector=kind,
            backbone=backbone,
            checkpoint_dir=checkpoint_dir,
            setting={"kind": "multilingual"},
            config=config,
            output_dir=Path(scratch) / "model",
            resamples=1000,
        )
        finished = time.monotonic()
        predictions_csv(result["predictions"])
        zip_folder(Path(scratch) / "model", Path(scratch) / "checkpoint.zip")
        stored = time.monotonic()
    seconds = result["seconds"]
    storing = stored - finished
    total = stored - started
    epochs = [record for record in result["history"] if "step_seconds" in record]
    cache = result["runtime"].get("feature_cache", {})
    steps = seconds["steps"]
    return {
        "epochs": len(epochs),
        "epoch_seconds": [record["seconds"] for record in epochs],
        "step_seconds": [record["step_seconds"] for record in epochs],
        "total": total,
        "outside_share": (total - steps) / total,
        "outside": {
            "validation": seconds["validation"],
            "copies": seconds["copies"],
            "feature cache": cache.get("seconds", 0.0),
            "building": seconds["training"]
            - steps
            - seconds["validation"]
            - seconds["copies"]
            - cache.get("seconds", 0),
            **{name: seconds[name] for name in OUTSIDE_STEPS},
            "storing": storing,
        },
        "cache": cache,
        "batches": result["runtime"].get("batches", {}),
        "device_peak": torch.cuda.max_memory_allocated() if cuda else None,
        "resident_peak": resident.peak,
        "clips": result["clips"],
    }


def describe(kind: str, label: str, r: dict) -> str:
    """The lines the bench prints for one end-to-end run."""
    per_epoch = np.mean(r["epoch_seconds"])
    # every phase, even one that took no time: a reader (and the bench's test) finds the same names each run
    outside = ", ".join(f"{name} {value:.2f}" for name, value in r["outside"].items())
    memory = f"peak resident memory {r['resident_peak'] / 1e9:.2f} GB"
    if r["device_peak"] is not None:
        memory = f"peak device memory {r['device_peak'] / 1e9:.2f} GB, " + memory
    lines = [
        f"{kind} end to end ({label}; {r['clips']['train']} training clips, {r['epochs']} epochs): "
        f"{r['total']:.1f} s, {per_epoch:.2f} s an epoch (its training steps {np.mean(r['step_seconds']):.2f} s), "
        f"{r['outside_share']:.0%} of the run outside training steps",
        f"  outside training steps, s: {outside}",
        f"  {memory}",
    ]
    if r["cache"].get("place") not in (None, "off"):
        lines.append(
            f"  feature cache: {r['cache']['clips']} clips, {r['cache']['bytes'] / 1e6:.1f} MB "
            f"({r['cache']['place']}), {r['cache']['seconds']:.2f} s to compute once"
        )
    return "\n".join(lines)


class ResidentPeak:
    """The most resident memory this process had while the block ran (sampled every 20 ms from
    /proc/self/statm; Linux)."""

    def __init__(self, every: float = 0.02):
        self.every, self.peak, self._stop = every, 0, threading.Event()

    def _sample(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        statm = Path("/proc/self/statm")
        while True:
            if statm.is_file():
                self.peak = max(self.peak, int(statm.read_text().split()[1]) * page)
            if self._stop.wait(self.every):
                return

    def __enter__(self):
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False
