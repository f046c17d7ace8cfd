"""Training and inference throughput of the two neural detectors, in clips per second.

    .venv/bin/python bench/train_throughput.py [--size auto|tiny|real] [--clips N] [--seconds S]
        [--steps N] [--workers N] [--whisper-batch N] [--frame-batch N] [--frame-accumulation N]
        [--physical-batch auto|off|N] [--e2e-clips N] [--e2e-epochs N] [--ranks N]

With CUDA (--size auto or real) the backbones have the real shapes, whisper-small (WhiStress) and
XLS-R 1B (EmphaClass), with random weights (nothing is downloaded) and bf16 autocast; without
CUDA (or --size tiny) the tiny test shapes on the CPU, and the output says so. Each detector
trains with MMEE's batches: WhiStress 32 clips; EmphaClass 8 clips with gradient accumulation 3
(24 an update), run as the physical batch the detector chooses (--physical-batch, "auto": on
CUDA the largest that fits). For each detector:

1. training: `--steps` training steps through the detector's own DataLoader (feature extraction,
   padding, transfer), after one warm-up step; clips per second, and the share of each step spent
   waiting for the next batch;
2. bare model step: the same number of steps on one batch already on the device (no data
   loading), measured the same way: the gap to (1) is what data loading costs;
3. inference: `predict` over all clips (the detector's loader included), clips per second;
4. the reference: a plain Hugging Face step of the same model as a user would write it (the
   transformers model, a head, AdamW, the same autocast), at a fixed input size (the clips'
   length; for Whisper its 30 s window and the longest transcript's tokens) and at the effective
   batch, in this process; its training and inference, and the project's as ratios to them;
5. the Whisper detector's feature cache: the frozen backbone's states of the clips computed once
   (seconds, bytes), then training steps from them (clips per second, and against (4));
6. end to end: the real `run_benchmark` on a synthetic export of --e2e-clips clips (80/10/10),
   --e2e-epochs epochs, then the predictions CSV and the checkpoint zip as the worker writes
   them: seconds an epoch, the share of the run outside training steps (validation, best-state
   copies, the feature cache, test prediction, the bootstrap, saving, storing) and peak memory
   (the device's, and the process's resident memory); the Whisper detector with and without its
   feature cache;
7. scaling (--ranks N, default every GPU where there are several, 2 on the CPU; 0 skips it): the
   training step of (1), data loading included, in torchrun processes (one a device, DDP, each
   with its DistributedSampler share), first 1 rank then N; clips per second over all ranks, and
   N ranks against N times one. On the CPU the ranks share the machine's cores: expect little.

The clips are synthetic (modelzoo.training.synthetic), about --seconds long. Targets (issues 23 and
32), on one GPU: training with data loading at least 90 % of the bare step; training at least 0.9x
and inference at least 0.8x the reference; N GPUs at least 0.85 x N of one. On the CPU these
ratios are not comparable to a GPU's and are printed as they are. Ends with one summary line.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the bench's helpers, when imported from elsewhere
from _end_to_end import describe, end_to_end, export_folder
from _reference_steps import reference_rates

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
    parser.add_argument(
        "--clips", type=int, default=None, help="default: the timed steps and the warm-up's within one epoch"
    )
    parser.add_argument("--seconds", type=float, default=None, help="clip length; default 5 s real, 2 s tiny")
    parser.add_argument("--steps", type=int, default=None, help="timed steps; default 10 real, 3 tiny")
    parser.add_argument("--workers", type=int, default=None, help="DataLoader workers; default 4 on CUDA, else 0")
    parser.add_argument("--whisper-batch", type=int, default=None, help="default 32 (MMEE) real, 4 tiny")
    parser.add_argument("--frame-batch", type=int, default=None, help="default 8 (MMEE) real, 4 tiny")
    parser.add_argument("--frame-accumulation", type=int, default=3, help="the frame classifier's (MMEE: 3)")
    parser.add_argument("--physical-batch", default="auto", help='"auto", "off" or a number of clips')
    parser.add_argument("--e2e-clips", type=int, default=300, help="end to end: clips in the export; 0 skips it")
    parser.add_argument("--e2e-epochs", type=int, default=3, help="end to end: epochs")
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
    accumulation = {"whisper-tokens": 1, "frame-classifier": args.frame_accumulation}
    physical = int(args.physical_batch) if args.physical_batch.isdigit() else args.physical_batch
    steps = args.steps or (10 if real else 3)
    workers = args.workers if args.workers is not None else (4 if cuda else 0)
    seconds = args.seconds or (5.0 if real else 2.0)
    # one epoch holds the warm-up and the timed steps: a new epoch starts the loader's workers again
    largest = max(batches[kind] * accumulation[kind] for kind in batches)
    clips = make_clips(args.clips or (steps + 1) * largest, seconds)
    if not cuda:
        # As many threads as each torchrun rank gets (OMP_NUM_THREADS, 1 by default), so that the
        # one-process figures and the 1-rank scaling figure measure the same thing; more threads
        # than free cores spin against each other on a shared machine.
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    gpus = torch.cuda.device_count() if cuda else 0
    ranks = args.ranks if args.ranks is not None else (gpus if gpus > 1 else (0 if cuda else 2))
    kinds = [kind.strip() for kind in args.detectors.split(",") if kind.strip()]
    shapes = "real-size shapes on the CPU: slow, a check of the code" if real else "tiny CPU configurations"
    where = torch.cuda.get_device_name() if cuda else f"CPU (no CUDA: {shapes}, not the real models' speed)"
    precision = "bf16" if cuda and torch.cuda.is_bf16_supported() else ("fp16" if cuda else "fp32")
    print(
        f"size: {size}; device: {where}; precision: {precision}; {len(clips)} clips of "
        f"~{np.mean([len(c.audio) for c in clips]) / 16000:.1f} s; {steps} timed steps; {workers} loader workers; "
        f"{torch.get_num_threads()} threads a process"
    )
    if not cuda:
        print(f"no GPU: {shapes}; the real-size figures need CUDA, and the ratios to the reference say")
        print("nothing of a GPU's")

    results, scaling, ends = {}, {}, {}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for kind in kinds:
            label, shape = SHAPES[size][kind]
            results[kind] = measure_detector(
                kind,
                folder,
                shape,
                batch=batches[kind],
                accumulation=accumulation[kind],
                physical=physical,
                workers=workers,
                device=device,
                clips=clips,
                steps=steps,
                seconds=seconds,
            )
            print_result(kind, label, results[kind])
        for kind in kinds if args.e2e_clips else ():
            export = folder / "export"
            if not export.exists():
                export_folder(export, args.e2e_clips, seconds)
            config = e2e_config(batches[kind], accumulation[kind], physical, workers, args.e2e_epochs, device)
            # the Whisper detector with and without its feature cache: what caching gives an epoch
            runs = {"": config}
            if kind == "whisper-tokens":
                runs = {"feature cache off": {**config, "feature_cache": "off"}, "feature cache auto": config}
            for label, run_config in runs.items():
                ends[(kind, label)] = end_to_end(kind, export, folder, kind, run_config, device)
                print(describe(kind, label or "MMEE's batches", ends[(kind, label)]))
                free_device_memory()
        scaled = [kind.strip() for kind in (args.scaled or args.detectors).split(",") if kind.strip()]
        for kind in scaled if ranks > 1 else ():
            spec = {
                "kind": kind,
                "folder": str(folder),
                "shape": SHAPES[size][kind][1],
                "batch": batches[kind],
                "workers": workers,
                "device": device,
                "steps": steps,
                "seconds": seconds,
            }
            scaling[kind] = {n: run_ranks(n, spec) for n in (1, ranks)}
            print_scaling(kind, scaling[kind], ranks)
    print(summary(results, ends, scaling, ranks) + f" [{size}, {device}]")
    return 0


def measure_detector(
    kind, folder, shape, *, batch, accumulation, physical, workers, device, clips, steps, seconds
) -> dict:
    """measure() of the detector, measure_cached() for the Whisper detector, and the reference
    step at the effective batch, one model on the device at a time."""
    effective = batch * accumulation
    detector = build(
        kind,
        folder,
        shape,
        batch=batch,
        workers=workers,
        device=device,
        accumulation=accumulation,
        physical=physical,
        eval_batch=effective,
    )
    result, tokens = measure(detector, clips, steps), 0
    if kind == "whisper-tokens":
        result["cached"] = measure_cached(detector, clips, steps)
        tokens = max(len(detector.tokenizer.encode([w.text for w in c.words], c.language).ids) for c in clips)
    del detector
    free_device_memory()
    result["reference"] = reference_rates(
        kind,
        folder / kind,
        batch=effective,
        eval_batch=effective,
        seconds=seconds,
        tokens=tokens,
        device=device,
        steps=steps,
    )
    free_device_memory()
    return result


def e2e_config(batch, accumulation, physical, workers, epochs, device) -> dict:
    """MMEE's batches (and the bench's loader workers) over a few epochs at a learning rate that
    moves random weights."""
    return {
        "epochs": epochs,
        "batch_size": batch,
        "gradient_accumulation": accumulation,
        "physical_batch": physical,
        "eval_batch_size": batch * accumulation,
        "num_workers": workers,
        "device": device,
        "learning_rate": 1e-3,
        "warmup_ratio": 0.0,
    }


def free_device_memory() -> None:
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def summary(results: dict, ends: dict, scaling: dict, ranks: int) -> str:
    parts = []
    for kind, r in results.items():
        reference = r["reference"]
        text = (
            f"{kind} train {r['train']:.1f} clips/s (bare step {r['bare']:.1f}, {r['train'] / r['bare']:.0%} of it; "
            f"waiting for data {r['wait_share']:.0%}; {r['train'] / reference['train']:.2f}x the reference "
            f"{reference['train']:.1f}), inference {r['inference']:.1f} clips/s "
            f"({r['inference'] / reference['inference']:.2f}x the reference {reference['inference']:.1f})"
        )
        if "cached" in r:
            text += (
                f", from cached states {r['cached']['train']:.1f} clips/s "
                f"({r['cached']['train'] / reference['train']:.2f}x the reference)"
            )
        parts.append(text)
    for (kind, label), r in ends.items():
        parts.append(
            f"{kind} end to end{' (' + label + ')' if label else ''} {np.mean(r['epoch_seconds']):.2f} s an epoch, "
            f"{r['outside_share']:.0%} outside training steps, peak "
            + (f"device {r['device_peak'] / 1e9:.2f} GB, " if r["device_peak"] is not None else "")
            + f"resident {r['resident_peak'] / 1e9:.2f} GB"
        )
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


def build(
    kind: str,
    folder: Path,
    shape: dict,
    *,
    batch: int,
    workers: int,
    device: str,
    save: bool = True,
    accumulation: int = 1,
    physical: int | str = "off",
    eval_batch: int | None = None,
):
    """The detector with random weights of `shape`, saved under `folder`/`kind` (unless `save` is
    False: already there); MMEE's batch and accumulation, the physical batch as given ("auto" is
    resolved by `measure` on its clips, as fit does on the training clips)."""
    common = {
        "batch_size": batch,
        "eval_batch_size": eval_batch or batch,
        "num_workers": workers,
        "device": device,
        "gradient_accumulation": accumulation,
        "physical_batch": physical,
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
    if not isinstance(detector.config.physical_batch, int):
        detector.physical_batch_set(clips)  # as fit does: "auto" probes the device's memory on CUDA
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
        seen += len(batch["binary"])

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
        "physical_batch": detector.config.loader_batch,
        "per_update": detector.config.batches_per_update,
    }


def measure_cached(detector, clips: list, steps: int) -> dict:
    """The Whisper detector's feature cache: the clips' frozen states computed once (on the
    device where there is one), then `steps` training steps from them, after one warm-up."""
    place = "device" if detector.device.type == "cuda" else "host"
    synchronize()
    started = time.perf_counter()
    entries = detector.states_compute(clips, place)
    synchronize()
    built = time.perf_counter() - started
    trainer = detector.trainer(total_updates=steps + 1)
    detector.model.train()
    batches = _cycle(detector.cached_loader(entries, training=True))
    trainer.step(next(batches))
    synchronize()
    seen, started = 0, time.perf_counter()
    for _ in range(steps):
        batch = next(batches)
        trainer.step(batch)
        seen += len(batch["binary"])
    synchronize()
    return {
        "train": seen / (time.perf_counter() - started),
        "build_seconds": built,
        "bytes": sum(entry.bytes for entry in entries),
        "clips": len(entries),
        "place": place,
    }


def _cycle(loader):
    while True:
        yield from loader


def print_result(kind: str, label: str, r: dict) -> None:
    reference = r["reference"]
    batches = f"{r['physical_batch']} clips a step, {r['per_update']} steps an update"
    print(f"{kind} ({label}, {batches}):")
    print(
        f"  training:        {r['train']:8.2f} clips/s  ({r['step_seconds']:.3f} s a step, "
        f"{r['wait_share']:.0%} of it waiting for data)"
    )
    print(f"  bare model step: {r['bare']:8.2f} clips/s  ({r['bare_step_seconds']:.3f} s a step, no data loading)")
    print(f"  training / bare: {r['train'] / r['bare']:8.0%}  (target 90 % on one GPU)")
    print(f"  inference:       {r['inference']:8.2f} clips/s")
    print(
        f"  reference (plain Hugging Face step, fixed size): training {reference['train']:.2f} clips/s, "
        f"inference {reference['inference']:.2f} clips/s"
    )
    print(
        f"  against the reference: training {r['train'] / reference['train']:.2f}x (target 0.9x), "
        f"bare step {r['bare'] / reference['train']:.2f}x, inference {r['inference'] / reference['inference']:.2f}x "
        "(target 0.8x)"
    )
    if "cached" in r:
        cached = r["cached"]
        print(
            f"  feature cache: {cached['clips']} clips' states, {cached['bytes'] / 1e6:.1f} MB ({cached['place']}), "
            f"computed once in {cached['build_seconds']:.2f} s; training from them {cached['train']:.2f} clips/s "
            f"= {cached['train'] / r['train']:.1f}x the training above, {cached['train'] / reference['train']:.2f}x "
            "the reference"
        )


if __name__ == "__main__":
    sys.exit(main())
