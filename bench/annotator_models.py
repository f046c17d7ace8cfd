"""Model-based labels against the majority's at the same budget, on simulated studies with a known truth.

    .venv/bin/python bench/annotator_models.py [--clips 300] [--per-clip 5 10] [--seeds 3] [--spammers 0.1]

For each budget (annotators a clip) and seed, a study of --clips clips of 15 words
(evaluation.stats.simulated_truth: the truth is the words the script asked to be emphasized; a
share --spammers of the annotators mark at random) is labelled three ways on the same
annotations: the published majority rule, crowd-kit's Dawid-Skene on the binary marks, and the
latent-trait ordinal model (evaluation.stats.annotator_models). Prints each one's word-level
error against the truth, averaged over the seeds with its standard error, the error's change
against the majority's, and the fit times; the last line sums it up.
"""

import argparse

import numpy as np

from evaluation.stats.annotator_models import majority_labels, word_posteriors
from evaluation.stats.simulated_truth import simulated_truth_study

MODELS = ("dawid-skene", "ordinal")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=300)
    parser.add_argument("--per-clip", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--spammers", type=float, default=0.1)
    options = parser.parse_args()
    print(f"{'budget':>6} {'labels':<12} {'error':>8} {'± SE':>7} {'vs majority':>12} {'fit s':>7}")
    summary = []
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
        summary.append(f"{per_clip}/clip ordinal {np.mean(errors['ordinal']) / base - 1:+.1%}")
    print(
        f"summary: spammers {options.spammers:.0%}, error of the ordinal model's labels against the majority's: "
        + ", ".join(summary)
    )


if __name__ == "__main__":
    main()
