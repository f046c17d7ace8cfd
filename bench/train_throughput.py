"""Training and inference throughput of the two neural detectors, in clips per second.

    .venv/bin/python bench/train_throughput.py [--size auto|tiny|real] [--clips N] [--seconds S]
        [--steps N] [--workers N] [--whisper-batch N] [--frame-batch N]

With CUDA (--size auto or real) the backbones have the real shapes, whisper-small (WhiStress) and
XLS-R 1B (EmphaClass), with random weights (nothing is downloaded) and bf16 autocast; without
CUDA (or --size tiny) the tiny test shapes on the CPU, and the output says so. For each detector:

1. training: `--steps` optimizer steps through the detector's own DataLoader (feature extraction,
   padding, transfer), after one warm-up step; clips per second, and the share of each step spent
   waiting for the next batch;
2. bare model step: the same number of steps on one batch already on the device (no data
   loading), measured the same way: the gap to (1) is what data loading costs;
3. inference: `predict` over all clips (the detector's loader included), clips per second.

4. scaling (--ranks N, default every GPU where there are several, 2 on the CPU; 0 skips it): the
   training step of (1), data loading included, in torchrun processes (one a device, DDP, each
   with its DistributedSampler share), first 1 rank then N; clips per second over all ranks, and
   N ranks against N times one. On the CPU the ranks share the machine's cores: expect little.

The clips are synthetic (modelzoo.training.synthetic), about --seconds long. Targets (issue 23):
training with data loading at least 80 % of the bare step on one GPU; N GPUs at least 0.85 x N
of one. Ends with one summary line.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import torch
from transformers.utils import logging as hf_logging

from modelzoo.training import distributed
from modelzoo.training.config import FrameClassifierConfig, WhisperTokenConfig
from modelzoo.training.detectors.frame_classifier import FrameClassifierDetector
from modelzoo.training.detectors.whisper_tokens import WhisperTokenDetector
from modelzoo.training.random_backbones import (
    TINY_WAV2VEC2,
    TINY_WHISPER,
    WHISPER_SMALL,
    XLS_R_1B,
    save_wav2vec2,
    save_whisper,
)
from modelzoo.training.synthetic import synthetic_clip

SHAPES = {
    "real": {
        "whisper-tokens": ("whisper-small (random weights)", WHISPER_SMALL),
        "frame-classifier": ("XLS-R 1B (random weights)", XLS_R_1B),
    },
    "tiny": {"whisper-tokens": ("tiny Whisper", TINY_WHISPER), "frame-classifier": ("tiny Wav2Vec2", TINY_WAV2VEC2)},
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("auto", "tiny", "real"), default="auto")
    parser.add_argument("--clips", type=int, default=None, help="default: 4 batches of the larger batch size")
    parser.add_argument("--seconds", type=float, default=None, help="clip length; default 5 s real, 2 s tiny")
    parser.add_argument("--steps", type=int, default=None, help="timed steps; default 10 real, 3 tiny")
    parser.add_argument("--workers", type=int, default=None, help="DataLoader workers; default 4 on CUDA, else 0")
    parser.add_argument("--whisper-batch", type=int, default=None, help="default 32 (MMEE) real, 4 tiny")
    parser.add_argument("--frame-batch", type=int, default=None, help="default 8 (MMEE) real, 4 tiny")
    parser.add_argument("--ranks", type=int, default=None, help="scaling 1 -> N ranks; default: the GPUs, or 2")
    parser.add_argument("--detectors", default="whisper-tokens,frame-classifier", help="comma-separated")
    parser.add_argument("--scaled", default=None, help="the detectors of the scaling runs; default: --detectors")
    parser.add_argument("--rank-of", default=None, help=argparse.SUPPRESS)  # internal: run as a torchrun rank
    args = parser.parse_args()
    hf_logging.disable_progress_bar()  # the saving and loading bars would bury the figures
    if args.rank_of:
        distributed.exit_rank(rank_main(json.loads(args.rank_of)))

    cuda = torch.cuda.is_available()
    size = ("real" if cuda else "tiny") if args.size == "auto" else args.size
    real = size == "real"
    device = "cuda" if cuda else "cpu"
    batches = {
        "whisper-tokens": args.whisper_batch or (32 if real else 4),
        "frame-classifier": args.frame_batch or (8 if real else 4),
    }
    steps = args.steps or (10 if real else 3)
    workers = args.workers if args.workers is not None else (4 if cuda else 0)
    clips = make_clips(args.clips or 4 * max(batches.values()), args.seconds or (5.0 if real else 2.0))
    if not cuda:
        # As many threads as each torchrun rank gets (OMP_NUM_THREADS, 1 by default), so that the
        # one-process figures and the 1-rank scaling figure measure the same thing; more threads
        # than free cores spin against each other on a shared machine.
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    gpus = torch.cuda.device_count() if cuda else 0
    ranks = args.ranks if args.ranks is not None else (gpus if gpus > 1 else (0 if cuda else 2))
    kinds = [kind.strip() for kind in args.detectors.split(",") if kind.strip()]
    where = torch.cuda.get_device_name() if cuda else "CPU (no CUDA: tiny CPU configurations, not the real models)"
    precision = "bf16" if cuda and torch.cuda.is_bf16_supported() else ("fp16" if cuda else "fp32")
    print(
        f"size: {size}; device: {where}; precision: {precision}; {len(clips)} clips of "
        f"~{np.mean([len(c.audio) for c in clips]) / 16000:.1f} s; {steps} timed steps; {workers} loader workers; "
        f"{torch.get_num_threads()} threads a process"
    )
    if not cuda:
        print("no GPU: these are tiny CPU configurations; the real-size figures need CUDA")

    results, scaling = {}, {}
    with tempfile.TemporaryDirectory() as folder:
        for kind in kinds:
            label, shape = SHAPES[size][kind]
            detector = build(kind, Path(folder), shape, batch=batches[kind], workers=workers, device=device)
            results[kind] = measure(detector, clips, steps)
            print_result(kind, label, batches[kind], results[kind])
            del detector
            if cuda:
                torch.cuda.empty_cache()
        scaled = [kind.strip() for kind in (args.scaled or args.detectors).split(",") if kind.strip()]
        for kind in scaled if ranks > 1 else ():
            spec = {
                "kind": kind,
                "folder": folder,
                "shape": SHAPES[size][kind][1],
                "batch": batches[kind],
                "workers": workers,
                "device": device,
                "steps": steps,
                "seconds": args.seconds or (5.0 if real else 2.0),
            }
            scaling[kind] = {n: run_ranks(n, spec) for n in (1, ranks)}
            print_scaling(kind, scaling[kind], ranks)
    print(summary(results, scaling, ranks) + f" [{size}, {device}]")
    return 0


def summary(results: dict, scaling: dict, ranks: int) -> str:
    parts = [
        f"{kind} train {r['train']:.1f} clips/s (bare step {r['bare']:.1f}, {r['train'] / r['bare']:.0%} of it; "
        f"waiting for data {r['wait_share']:.0%}), inference {r['inference']:.1f} clips/s"
        for kind, r in results.items()
    ]
    parts += [
        f"{kind} {ranks} ranks {s[ranks]:.1f} clips/s = {s[ranks] / s[1]:.2f} x 1 rank" for kind, s in scaling.items()
    ]
    return "summary: " + "; ".join(parts)


def run_ranks(ranks: int, spec: dict) -> float:
    """Clips per second over `ranks` torchrun processes training on their DistributedSampler shares."""
    out = Path(spec["folder"]) / f"ranks-{spec['kind']}-{ranks}.json"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        str(ranks),
        str(Path(__file__).resolve()),
        "--rank-of",
        json.dumps({**spec, "out": str(out)}),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())["clips_per_second"]


def rank_main(spec: dict) -> int:
    """One torchrun rank of run_ranks: the detector built in the process group (so DDP-wrapped),
    its training loader (so a DistributedSampler share), spec["steps"] timed steps after one warm-up."""
    device = spec["device"]
    ranks = distributed.start(device)
    if device == "cuda":
        device = f"cuda:{ranks.local_rank}"
    folder = Path(spec["folder"])
    per_rank = 2 * spec["batch"] * (spec["steps"] + 1)
    clips = make_clips(per_rank * ranks.world, spec["seconds"])
    detector = build(
        spec["kind"], folder, spec["shape"], batch=spec["batch"], workers=spec["workers"], device=device, save=False
    )
    trainer = detector.trainer(total_updates=spec["steps"] + 1)
    detector.model.train()
    batches = _cycle(detector.loader(clips, training=True))
    trainer.step(next(batches))
    synchronize()
    if distributed.is_distributed():
        torch.distributed.barrier()  # every rank starts the clock together
    started, seen = time.perf_counter(), 0
    for _ in range(spec["steps"]):
        batch = next(batches)
        trainer.step(batch)
        seen += len(batch["binary"])
    synchronize()
    rate = seen / (time.perf_counter() - started)
    rates = distributed.gather_shares([rate], ranks.world) if distributed.is_distributed() else [rate]
    if ranks.main:
        Path(spec["out"]).write_text(json.dumps({"clips_per_second": float(sum(rates)), "per_rank": rates}))
    distributed.stop()
    return 0


def print_scaling(kind: str, rates: dict, ranks: int) -> None:
    one, many = rates[1], rates[ranks]
    print(f"{kind} scaling (torchrun, DDP, data loading included):")
    print(f"  1 rank:  {one:8.2f} clips/s")
    print(
        f"  {ranks} ranks: {many:8.2f} clips/s  = {many / one:.2f} x 1 rank, {many / (ranks * one):.0%} of {ranks} x 1 rank (target 85 %)"
    )


def make_clips(count: int, seconds: float) -> list:
    rng = np.random.default_rng(0)
    words = max(2, round(seconds / 0.45))  # a synthetic word with its pause lasts about 0.45 s
    return [synthetic_clip(rng, clip_id=f"bench-{i}", words=words) for i in range(count)]


def build(kind: str, folder: Path, shape: dict, *, batch: int, workers: int, device: str, save: bool = True):
    common = {
        "batch_size": batch,
        "eval_batch_size": batch,
        "num_workers": workers,
        "device": device,
        "gradient_accumulation": 1,
    }
    if kind == "whisper-tokens":
        if save:
            save_whisper(folder / kind, shape)
        detector = WhisperTokenDetector(kind, folder)
        detector.build(WhisperTokenConfig(**common))
    else:
        if save:
            save_wav2vec2(folder / kind, shape)
        detector = FrameClassifierDetector(kind, folder)
        detector.build(FrameClassifierConfig(**common))
    return detector


def synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def measure(detector, clips: list, steps: int) -> dict:
    trainer = detector.trainer(total_updates=steps + 1)
    detector.model.train()
    loader_iterator = _cycle(detector.loader(clips, training=True))
    trainer.step(next(loader_iterator))  # warm-up: kernels, allocator, worker start
    synchronize()

    waited = stepped = 0.0
    seen = 0
    for _ in range(steps):
        started = time.perf_counter()
        batch = next(loader_iterator)
        ready = time.perf_counter()
        trainer.step(batch)
        synchronize()
        waited += ready - started
        stepped += time.perf_counter() - ready
        seen += len(batch["input_features" if "input_features" in batch else "input_values"])

    bare_batch = {key: value.to(detector.device) if torch.is_tensor(value) else value for key, value in batch.items()}
    synchronize()
    started = time.perf_counter()
    for _ in range(steps):
        trainer.step(bare_batch)
    synchronize()
    bare = time.perf_counter() - started

    started = time.perf_counter()
    detector.predict(clips)
    synchronize()
    inference = time.perf_counter() - started
    return {
        "train": seen / (waited + stepped),
        "wait_share": waited / (waited + stepped),
        "bare": steps * len(bare_batch["binary"]) / bare,
        "inference": len(clips) / inference,
        "step_seconds": (waited + stepped) / steps,
        "bare_step_seconds": bare / steps,
    }


def _cycle(loader):
    while True:
        yield from loader


def print_result(kind: str, label: str, batch: int, r: dict) -> None:
    print(f"{kind} ({label}, batch {batch}):")
    print(
        f"  training:        {r['train']:8.2f} clips/s  ({r['step_seconds']:.3f} s a step, "
        f"{r['wait_share']:.0%} of it waiting for data)"
    )
    print(f"  bare model step: {r['bare']:8.2f} clips/s  ({r['bare_step_seconds']:.3f} s a step, no data loading)")
    print(f"  training / bare: {r['train'] / r['bare']:8.0%}  (target 80 % on one GPU)")
    print(f"  inference:       {r['inference']:8.2f} clips/s")


if __name__ == "__main__":
    sys.exit(main())
