"""Model-based labels against the majority's at the same budget, on simulated studies with a known truth.

    .venv/bin/python bench/annotator_models.py [--clips 300] [--per-clip 5 10] [--seeds 3] [--spammers 0.1]
        [--harness-clips 150] [--harness-per-clip 3 5 10 15] [--harness-seeds 4] [--jobs 1]

For each budget (annotators a clip) and seed, a study of --clips clips of 15 words
(evaluation.stats.simulated_truth: the truth is the words the script asked to be emphasized; a
share --spammers of the annotators mark at random) is labelled three ways on the same
annotations: the published majority rule, crowd-kit's Dawid-Skene on the binary marks, and the
latent-trait ordinal model (evaluation.stats.annotator_models). Prints each one's word-level
error against the truth, averaged over the seeds with its standard error, the error's change
against the majority's, and the fit times, and its summary line.

Then the validation harness (evaluation.stats.label_validation) on crowds built independently of
the models (evaluation.stats.crowds: honest listeners with their own thresholds, spammers, lazy
listeners, listeners who mark everything heavily or nothing, three-level confused listeners,
mixtures of all, clips of varying difficulty): for every mixture and listeners a clip, each
labelling's word error against the truth and label change against the majority, with 95 %
intervals over --harness-seeds crowds of --harness-clips clips, and whether it is worse or better
than the majority beyond the seeds' noise. "recommended" is what a label set recommends (a model's
labels only where they predict held-out listeners better than the majority's). The last line sums
the harness up. --harness-seeds 0 leaves it out; --jobs runs its crowds on several cores.

Then the speed of a label set's annotator model: the ordinal model with the label set's default
bootstrap (DEFAULT_RESAMPLES refits) on a study of MMEE's scale (--speed-clips clips x
--speed-per-clip listeners x 15 words; limit 60 s) and on a researcher's small study
(--speed-small-clips clips x --speed-per-clip listeners: 100 annotations; limit 5 s), wall clock,
one after the other. Its figures end the last line (a line of their own without the harness).
--speed-clips 0 leaves it out.
"""

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.stats.annotator_models import DEFAULT_RESAMPLES, majority_labels, word_posteriors
from evaluation.stats.crowds import MIXTURES as CROWDS
from evaluation.stats.label_validation import harness, summary, table
from evaluation.stats.simulated_truth import simulated_truth_study

MODELS = ("dawid-skene", "ordinal")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=300)
    parser.add_argument("--per-clip", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--spammers", type=float, default=0.1)
    parser.add_argument("--harness-clips", type=int, default=150)
    parser.add_argument("--harness-per-clip", type=int, nargs="+", default=[3, 5, 10, 15])
    parser.add_argument("--harness-seeds", type=int, default=4)
    parser.add_argument("--harness-mixtures", nargs="+", default=list(CROWDS), choices=list(CROWDS))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--speed-clips", type=int, default=10_000)
    parser.add_argument("--speed-small-clips", type=int, default=10)
    parser.add_argument("--speed-per-clip", type=int, default=10)
    options = parser.parse_args()
    print(f"{'budget':>6} {'labels':<12} {'error':>8} {'± SE':>7} {'vs majority':>12} {'fit s':>7}")
    summaries = []
    for per_clip in options.per_clip:
        errors = {name: [] for name in ("majority", *MODELS)}
        seconds = dict.fromkeys(MODELS, 0.0)
        for seed in range(options.seeds):
            study = simulated_truth_study(clips=options.clips, per_clip=per_clip, spammers=options.spammers, seed=seed)
            data = study.data
            word_clip, word_index, majority = majority_labels(clip=data.clip, levels=data.levels)
            truth = study.true_binary[word_clip, word_index]
            errors["majority"].append(np.mean(majority != truth))
            for model in MODELS:
                fit = word_posteriors(
                    clip=data.clip, annotator=data.annotator, levels=data.levels, model=model, resamples=0
                )
                errors[model].append(np.mean(fit.labels() != truth))
                seconds[model] += fit.fit_seconds / options.seeds
        base = np.mean(errors["majority"])
        for name, values in errors.items():
            mean, se = np.mean(values), np.std(values, ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0
            change = f"{mean / base - 1:+.1%}" if name != "majority" else ""
            fit = f"{seconds[name]:.1f}" if name in seconds else ""
            print(f"{per_clip:>6} {name:<12} {mean:8.4f} {se:7.4f} {change:>12} {fit:>7}")
        summaries.append(f"{per_clip}/clip ordinal {np.mean(errors['ordinal']) / base - 1:+.1%}")
    print(
        f"summary: spammers {options.spammers:.0%}, error of the ordinal model's labels against the majority's: "
        + ", ".join(summaries)
    )
    speed = print_speed(options) if options.speed_clips > 0 else ""
    if options.harness_seeds > 0:
        print_harness(options, speed)
    elif speed:
        print("summary: " + speed.removeprefix("; "))


SPEED_LIMITS = {"MMEE's scale": 60.0, "a researcher's study": 5.0}


def print_speed(options) -> str:
    """Time the ordinal model as a label set fits it (default resamples) at both sizes; the table,
    and the figures for the last line."""
    print(f"\nspeed: the ordinal model with {DEFAULT_RESAMPLES} bootstrap refits, as a label set fits it")
    print(f"{'study':<22} {'annotations':>11} {'words':>8} {'seconds':>8} {'limit':>6}")
    figures = []
    sizes = {"MMEE's scale": options.speed_clips, "a researcher's study": options.speed_small_clips}
    for name, clips in sizes.items():
        per_task = min(clips, 20)  # a small study's listeners each hear all of its clips
        data = simulated_truth_study(
            clips=clips, per_clip=options.speed_per_clip, spammers=options.spammers, clips_per_task=per_task
        ).data
        started = time.perf_counter()
        word_posteriors(clip=data.clip, annotator=data.annotator, levels=data.levels, resamples=DEFAULT_RESAMPLES)
        seconds = time.perf_counter() - started
        words = int((data.levels >= 0).sum())
        print(f"{name:<22} {data.clip.size:>11,} {words:>8,} {seconds:8.1f} {SPEED_LIMITS[name]:6.0f}")
        figures.append(f"{data.clip.size:,} annotations in {seconds:.1f} s (limit {SPEED_LIMITS[name]:.0f})")
    return "; ordinal label set: " + ", ".join(figures)


def print_harness(options, speed: str) -> None:
    arguments = {
        "mixtures": options.harness_mixtures,
        "per_clip": options.harness_per_clip,
        "seeds": options.harness_seeds,
        "clips": options.harness_clips,
    }
    print(
        f"\nvalidation harness: {options.harness_clips} clips x 15 words, {options.harness_seeds} seeds, "
        "95 % intervals over seeds"
    )
    if options.jobs > 1:
        with ProcessPoolExecutor(options.jobs) as pool:
            rows = harness(**arguments, mapper=pool.map)
    else:
        rows = harness(**arguments)
    print("\n".join(table(rows)))
    print(summary(rows) + speed)


if __name__ == "__main__":
    main()
