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

The clips are synthetic (modelzoo.training.synthetic), about --seconds long. Ends with one summary line.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import torch
from transformers.utils import logging as hf_logging

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
    "real": {"whisper-tokens": ("whisper-small (random weights)", WHISPER_SMALL),
             "frame-classifier": ("XLS-R 1B (random weights)", XLS_R_1B)},
    "tiny": {"whisper-tokens": ("tiny Whisper", TINY_WHISPER), "frame-classifier": ("tiny Wav2Vec2", TINY_WAV2VEC2)},
}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("auto", "tiny", "real"), default="auto")
    parser.add_argument("--clips", type=int, default=None, help="default: 4 batches of the larger batch size")
    parser.add_argument("--seconds", type=float, default=None, help="clip length; default 5 s real, 2 s tiny")
    parser.add_argument("--steps", type=int, default=None, help="timed steps; default 10 real, 3 tiny")
    parser.add_argument("--workers", type=int, default=None, help="DataLoader workers; default 4 on CUDA, else 0")
    parser.add_argument("--whisper-batch", type=int, default=None, help="default 32 (MMEE) real, 4 tiny")
    parser.add_argument("--frame-batch", type=int, default=None, help="default 8 (MMEE) real, 4 tiny")
    args = parser.parse_args()
    hf_logging.disable_progress_bar()  # the saving and loading bars would bury the figures

    cuda = torch.cuda.is_available()
    size = ("real" if cuda else "tiny") if args.size == "auto" else args.size
    real = size == "real"
    device = "cuda" if cuda else "cpu"
    batches = {"whisper-tokens": args.whisper_batch or (32 if real else 4),
               "frame-classifier": args.frame_batch or (8 if real else 4)}  # fmt: skip
    steps = args.steps or (10 if real else 3)
    workers = args.workers if args.workers is not None else (4 if cuda else 0)
    clips = make_clips(args.clips or 4 * max(batches.values()), args.seconds or (5.0 if real else 2.0))
    where = torch.cuda.get_device_name() if cuda else "CPU (no CUDA: tiny shapes, not the real models)"
    print(f"size: {size}; device: {where}; bf16 autocast: {'on' if cuda else 'off'}; {len(clips)} clips of "
          f"~{np.mean([len(c.audio) for c in clips]) / 16000:.1f} s; {steps} timed steps; {workers} loader workers")  # fmt: skip

    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for kind in ("whisper-tokens", "frame-classifier"):
            label, shape = SHAPES[size][kind]
            detector = build(kind, Path(folder), shape, batch=batches[kind], workers=workers, device=device)
            results[kind] = measure(detector, clips, steps)
            print_result(kind, label, batches[kind], results[kind])
            del detector
            if cuda:
                torch.cuda.empty_cache()
    print("summary: " + "; ".join(
        f"{kind} train {r['train']:.1f} clips/s (bare step {r['bare']:.1f}, waiting for data {r['wait_share']:.0%}), "
        f"inference {r['inference']:.1f} clips/s" for kind, r in results.items()
    ) + f" [{size}, {device}]")  # fmt: skip
    return 0


def make_clips(count: int, seconds: float) -> list:
    rng = np.random.default_rng(0)
    words = max(2, round(seconds / 0.45))  # a synthetic word with its pause lasts about 0.45 s
    return [synthetic_clip(rng, clip_id=f"bench-{i}", words=words) for i in range(count)]


def build(kind: str, folder: Path, shape: dict, *, batch: int, workers: int, device: str):
    common = {"batch_size": batch, "eval_batch_size": batch, "num_workers": workers, "device": device,
              "gradient_accumulation": 1}  # fmt: skip
    if kind == "whisper-tokens":
        save_whisper(folder / kind, shape)
        detector = WhisperTokenDetector(kind, folder)
        detector.build(WhisperTokenConfig(**common))
    else:
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
        "train": seen / (waited + stepped), "wait_share": waited / (waited + stepped),
        "bare": steps * len(bare_batch["binary"]) / bare, "inference": len(clips) / inference,
        "step_seconds": (waited + stepped) / steps, "bare_step_seconds": bare / steps,
    }  # fmt: skip


def _cycle(loader):
    while True:
        yield from loader


def print_result(kind: str, label: str, batch: int, r: dict) -> None:
    print(f"{kind} ({label}, batch {batch}):")
    print(f"  training:        {r['train']:8.2f} clips/s  ({r['step_seconds']:.3f} s a step, "
          f"{r['wait_share']:.0%} of it waiting for data)")  # fmt: skip
    print(f"  bare model step: {r['bare']:8.2f} clips/s  ({r['bare_step_seconds']:.3f} s a step, no data loading)")
    print(f"  inference:       {r['inference']:8.2f} clips/s")


if __name__ == "__main__":
    sys.exit(main())
