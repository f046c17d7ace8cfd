"""Where the Whisper token detector's loader spends its time, before and after features cut to the clip.

    .venv/bin/python bench/whisper_loader_profile.py [--clips N] [--seconds S] [--batch N] [--workers N]

The detector's own pieces (modelzoo.training.detectors.whisper_tokens: TokenDataset, the collate,
features_to_window) with Whisper's real feature extractor (80 mel bins, a 30 s window) and a
Whisper-like tokenizer; no model is needed, so the figures are the real sizes on any machine.
"Before" is the loader as it was until features were cut: each clip's log-mel over the whole
30 s window through the worker queues, stacked by the collate; rebuilt here from the cut
features with the model's own features_to_window, which gives the extractor's output bit for bit.

Per clip, in this process: the log-mel (the extractor computes the whole window), finding the
clip's end in it and cutting, the tokens. Per batch: the collate; the bytes a batch carries; a
copy of the batch (what DataLoader's pin-memory thread does into page-locked memory; pinning
itself needs CUDA); the passage from a worker process to this one (shared memory and queue: a
worker collating ready items, so nothing else is timed); putting the window back on the device
(here on the CPU). Then the whole DataLoader, 0 and --workers workers, before and after in
turns, the median of --repeats epochs each; and what a new epoch's workers cost to start (the
detector's loaders start them at every epoch; kept, they would take the first batch at once).

Ends with one summary line. On a GPU machine the same script measures its CPUs; the pinned copy
and the transfer to the device are measured there by bench/train_throughput.py's steps.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from modelzoo.training.detectors.whisper_tokens import (
    TokenDataset,
    WordTokenizer,
    _Collate,
    features_cut,
    features_to_window,
    padded_rows,
    token_fields,
)
from modelzoo.training.random_backbones import whisper_tokenizer
from modelzoo.training.synthetic import synthetic_clip

WINDOW_FRAMES = 3000  # whisper-small: 30 s of 10 ms frames
MAX_TOKENS = 448


class WindowDataset(TokenDataset):
    """The loader before: every clip's log-mel over the whole window."""

    def __getitem__(self, index: int) -> dict:
        item = super().__getitem__(index)
        features = torch.from_numpy(item["features"])[None]
        item["features"] = features_to_window(features, torch.tensor([item["fill"]]), WINDOW_FRAMES)[0].numpy()
        return item


class WindowCollate:
    """The collate before: the windows stacked, the tokens padded to the longest."""

    def __init__(self, pad_id: int):
        self.pad_id = pad_id

    def __call__(self, items: list[dict]) -> dict:
        length = max(len(item["ids"]) for item in items)
        return {
            "input_features": torch.from_numpy(np.stack([item["features"] for item in items])),
            "decoder_input_ids": padded_rows([item["ids"] for item in items], length, self.pad_id, torch.long),
            **token_fields(items, length),
        }


class Ready(Dataset):
    """Items made beforehand: a loader over them times only the collate and the passage."""

    def __init__(self, items: list[dict]):
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> dict:
        return self.items[index]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=5.0, help="about how long each clip is")
    parser.add_argument("--batch", type=int, default=32, help="MMEE's WhiStress batch")
    parser.add_argument("--workers", type=int, default=2, help="the loader's worker processes")
    parser.add_argument("--repeats", type=int, default=3, help="loader runs of each kind (their median)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # as in a DataLoader worker

    from transformers import WhisperFeatureExtractor

    extractor = WhisperFeatureExtractor()  # whisper-small's: 80 mel bins, 30 s
    tokenizer = WordTokenizer(whisper_tokenizer(), MAX_TOKENS)
    rng = np.random.default_rng(0)
    words = max(2, round(args.seconds / 0.37))  # a synthetic word with its pause lasts about 0.37 s
    clips = [synthetic_clip(rng, clip_id=f"p{i}", words=words) for i in range(args.clips)]
    seconds = np.mean([len(c.audio) for c in clips]) / 16000
    print(
        f"{len(clips)} clips of ~{seconds:.1f} s, batch {args.batch}, "
        f"Whisper's 30 s window ({WINDOW_FRAMES} frames x 80 mel bins), 1 thread a process"
    )
    collates = {"before": WindowCollate(tokenizer.pad_id), "after": _Collate(tokenizer.pad_id, 16, MAX_TOKENS, 3000)}
    datasets = {
        "before": WindowDataset(clips, extractor, tokenizer),
        "after": TokenDataset(clips, extractor, tokenizer),
    }

    per_clip = item_costs(clips[:64], extractor, tokenizer)
    print(
        f"per clip: log-mel {per_clip['log-mel']:.2f} ms, finding its end and cutting {per_clip['cut']:.2f} ms, "
        f"tokens {per_clip['tokens']:.2f} ms"
    )
    figures = {}
    for name in ("before", "after"):
        items = [datasets[name][i] for i in range(args.batch)]
        figures[name] = batch_costs(items, collates[name], args.workers)
    # the whole loader, before and after in turns (a shared machine's load drifts), the median of --repeats
    rates = {(name, workers): [] for name in figures for workers in (0, args.workers)}
    for _ in range(args.repeats):
        for (name, workers), runs in rates.items():
            runs.append(loader_rate(datasets[name], collates[name], args.batch, workers))
    for name, f in figures.items():
        f["loader"] = {workers: float(np.median(rates[(name, workers)])) for workers in (0, args.workers)}
        print(
            f"{name:6s} a batch: {f['megabytes']:6.1f} MB; collate {f['collate']:6.1f} ms; copy (pin stand-in) "
            f"{f['copy']:5.1f} ms; worker -> this process {f['passage']:6.1f} ms"
            + (f"; window back on the device (CPU here) {f['window']:.1f} ms" if name == "after" else "")
        )
        print(
            f"{name:6s} loader: "
            + ", ".join(f"{workers} workers {rate:7.1f} clips/s" for workers, rate in f["loader"].items())
        )
    start, kept = worker_start(datasets["after"], collates["after"], args.batch, args.workers)
    print(f"a new epoch's first batch with {args.workers} workers: started anew {start:.0f} ms, kept {kept:.0f} ms")
    before, after = figures["before"], figures["after"]
    print(
        f"summary: whisper loader, batch {args.batch} of ~{seconds:.1f} s clips: "
        f"{before['megabytes']:.1f} -> {after['megabytes']:.1f} MB a batch "
        f"({before['megabytes'] / after['megabytes']:.1f}x fewer); worker -> process {before['passage']:.0f} -> "
        f"{after['passage']:.0f} ms a batch; copy {before['copy']:.1f} -> {after['copy']:.1f} ms; "
        f"loader with {args.workers} workers {before['loader'][args.workers]:.0f} -> "
        f"{after['loader'][args.workers]:.0f} clips/s ({after['loader'][args.workers] / before['loader'][args.workers]:.2f}x), "
        f"in this process {before['loader'][0]:.0f} -> {after['loader'][0]:.0f} clips/s; log-mel "
        f"{per_clip['log-mel']:.2f} ms a clip; a new epoch's worker start {start:.0f} ms (kept: {kept:.0f}) [cpu]"
    )
    return 0


def milliseconds(run, repeat: int) -> float:
    run()  # the first call pays for allocations and caches
    started = time.perf_counter()
    for _ in range(repeat):
        run()
    return 1000 * (time.perf_counter() - started) / repeat


def item_costs(clips, extractor, tokenizer) -> dict:
    windows = [extractor(c.audio, sampling_rate=16000, return_tensors="np").input_features[0] for c in clips]
    started = time.perf_counter()
    for clip in clips:
        extractor(clip.audio, sampling_rate=16000, return_tensors="np")
    mel = time.perf_counter()
    for window in windows:
        features_cut(window)
    cut = time.perf_counter()
    for clip in clips:
        tokenizer.encode([w.text for w in clip.words], clip.language)
    done = time.perf_counter()
    each = 1000 / len(clips)
    return {"log-mel": (mel - started) * each, "cut": (cut - mel) * each, "tokens": (done - cut) * each}


def batch_costs(items, collate, workers: int) -> dict:
    batch = collate(items)
    tensors = [value for value in batch.values() if torch.is_tensor(value)]
    figures = {
        "megabytes": sum(t.numel() * t.element_size() for t in tensors) / 1e6,
        "collate": milliseconds(lambda: collate(items), 10),
        "copy": milliseconds(lambda: [t.clone() for t in tensors], 20),
        "passage": passage(items, collate, max(1, workers)),
    }
    if "features_fill" in batch:
        figures["window"] = milliseconds(
            lambda: features_to_window(batch["input_features"], batch["features_fill"], WINDOW_FRAMES), 10
        )
    return figures


def passage(items, collate, workers: int, batches: int = 40) -> float:
    """Milliseconds a batch, in this process, of a loader whose workers only collate ready items
    (the median of three runs: a shared machine's scheduling makes single runs noisy)."""
    ready = Ready(items * batches)
    runs = []
    for _ in range(3):
        loader = DataLoader(ready, batch_size=len(items), collate_fn=collate, num_workers=workers)
        iterator = iter(loader)
        next(iterator)  # the workers started
        started = time.perf_counter()
        count = sum(1 for _ in iterator)
        runs.append(1000 * (time.perf_counter() - started) / count)
    return float(np.median(runs))


def loader_rate(dataset, collate, batch: int, workers: int) -> float:
    loader = DataLoader(dataset, batch_size=batch, shuffle=True, collate_fn=collate, num_workers=workers)
    iterator = iter(loader)
    next(iterator)
    started, seen = time.perf_counter(), 0
    for item in iterator:
        seen += len(item["decoder_input_ids"])
    return seen / (time.perf_counter() - started)


def worker_start(dataset, collate, batch: int, workers: int) -> tuple[float, float]:
    """Milliseconds to a new epoch's first batch: workers started anew (as each epoch did), and kept."""
    if workers == 0:
        return 0.0, 0.0
    times = {}
    for persistent in (False, True):
        loader = DataLoader(
            dataset, batch_size=batch, collate_fn=collate, num_workers=workers, persistent_workers=persistent
        )
        for _ in iter(loader):  # the first epoch
            pass
        started = time.perf_counter()
        next(iter(loader))
        times[persistent] = 1000 * (time.perf_counter() - started)
    return times[False], times[True]


if __name__ == "__main__":
    sys.exit(main())
