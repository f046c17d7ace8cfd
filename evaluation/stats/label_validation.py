"""The validation harness of model labels: on crowds built independently of the annotator models
(evaluation.stats.crowds), each labelling's word error against the truth and its labels' change
against the majority of the same annotations (the fixed design's), with 95 % intervals over seeds.
Pure numpy and scipy (crowd-kit for Dawid-Skene, through evaluation.stats.annotator_models).

Labellings, all of the same annotations (the first N listeners of every clip):

- majority: the published rule, more than half of the word's N listeners mark it;
- dawid-skene, ordinal: each model's own labels (posterior above 1/2);
- recommended: what the product recommends, with no truth to go by: the model whose labels predict
  a held-out listener's marks better than the majority's beyond the clips' noise
  (annotator_models.HeldOutStanding; the larger gain if both do), else the majority.

A labelling is worse than the majority beyond the seeds' noise on a mixture and N where the 95 %
interval of its paired error difference (the same crowds) lies above zero.
"""

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student

from evaluation.stats.annotator_models import word_posteriors
from evaluation.stats.crowds import MIXTURES, crowd

LABELLINGS = ("majority", "dawid-skene", "ordinal", "recommended")
MODELS = ("dawid-skene", "ordinal")


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float

    @classmethod
    def over(cls, values: Sequence[float] | np.ndarray) -> "Interval":
        """Mean and 95 % t interval over seeds (a point with one seed)."""
        seeds = np.asarray(values, dtype=np.float64)
        mean = float(seeds.mean())
        if seeds.size < 2:
            return cls(mean, mean, mean)
        half = student.ppf(0.975, seeds.size - 1) * seeds.std(ddof=1) / np.sqrt(seeds.size)
        return cls(mean, float(mean - half), float(mean + half))


@dataclass(frozen=True)
class HarnessRow:
    mixture: str
    per_clip: int
    labelling: str
    error: Interval  # word error against the truth
    change: Interval  # share of words whose label differs from the majority's
    against_majority: Interval  # error minus the majority's, paired by seed
    chosen: float  # share of seeds where "recommended" took a model's labels (0 for the others)
    seconds: float  # mean fit time a seed

    @property
    def worse_than_majority(self) -> bool:
        return self.against_majority.low > 0

    @property
    def better_than_majority(self) -> bool:
        return self.against_majority.high < 0


def seed_figures(mixture: str, *, clips: int, per_clip: int, seed: int, words: int = 15) -> dict[str, dict]:
    """One crowd's figures: per labelling, its error, change and fit seconds (and which model
    "recommended" took)."""
    study = crowd(mixture, clips=clips, listeners=per_clip, words=words, seed=seed)
    truth = study.truth.ravel()
    majority = study.majority(per_clip).ravel()
    clip, annotator, levels = study.annotations(per_clip)
    labels, seconds, gains = {"majority": majority}, {"majority": 0.0}, {}
    for model in MODELS:
        started = time.perf_counter()
        fit = word_posteriors(
            clip=clip, annotator=annotator, levels=levels, n_annotators=study.listeners, model=model, resamples=0
        )
        seconds[model] = time.perf_counter() - started
        labels[model] = fit.labels()
        if fit.recommended() and fit.standing is not None:
            gains[model] = fit.standing.difference
    chosen = max(gains, key=gains.__getitem__) if gains else "majority"
    labels["recommended"], seconds["recommended"] = labels[chosen], sum(seconds.values())
    return {
        name: {
            "error": float(np.mean(labels[name] != truth)),
            "change": float(np.mean(labels[name] != majority)),
            "seconds": seconds[name],
            "chosen": float(name == "recommended" and chosen != "majority"),
        }
        for name in LABELLINGS
    }


def harness(
    *,
    mixtures: Iterable[str] = tuple(MIXTURES),
    per_clip: Iterable[int] = (3, 5, 10, 15),
    seeds: int = 5,
    clips: int = 200,
    words: int = 15,
    mapper=map,
) -> list[HarnessRow]:
    """HarnessRows for every mixture, listeners a clip and labelling, over `seeds` crowds each.
    `mapper(function, iterable)` runs the crowds (map; a process pool's map to use several cores)."""
    if seeds < 1:
        raise ValueError("the harness needs at least one seed")
    cells = [(mixture, n) for mixture in mixtures for n in per_clip]
    jobs = [(mixture, n, seed, clips, words) for mixture, n in cells for seed in range(seeds)]
    results = list(mapper(_seed_job, jobs))
    rows = []
    for index, (mixture, n) in enumerate(cells):
        rows += _cell_rows(mixture, n, results[index * seeds : (index + 1) * seeds])
    return rows


def _seed_job(job: tuple) -> dict[str, dict]:
    mixture, n, seed, clips, words = job
    return seed_figures(mixture, clips=clips, per_clip=n, seed=seed, words=words)


def _cell_rows(mixture: str, n: int, figures: list[dict]) -> list[HarnessRow]:
    base = [f["majority"]["error"] for f in figures]
    rows = []
    for name in LABELLINGS:
        error = [f[name]["error"] for f in figures]
        rows.append(
            HarnessRow(
                mixture=mixture,
                per_clip=n,
                labelling=name,
                error=Interval.over(error),
                change=Interval.over([f[name]["change"] for f in figures]),
                against_majority=Interval.over(np.subtract(error, base)),
                chosen=float(np.mean([f[name]["chosen"] for f in figures])),
                seconds=float(np.mean([f[name]["seconds"] for f in figures])),
            )
        )
    return rows


def table(rows: Sequence[HarnessRow]) -> list[str]:
    """The harness as printed lines: error, change and the paired difference with intervals."""
    lines = [
        f"{'mixture':<26} {'N':>2} {'labels':<12} {'error %':>16} {'vs majority (pp)':>20} "
        f"{'changed %':>8} {'model':>6} {'fit s':>6}  verdict"
    ]
    for row in rows:
        verdict = "worse" if row.worse_than_majority else "better" if row.better_than_majority else ""
        diff = row.against_majority
        lines.append(
            f"{row.mixture:<26} {row.per_clip:>2} {row.labelling:<12} "
            f"{100 * row.error.mean:6.2f} [{100 * row.error.low:5.2f},{100 * row.error.high:5.2f}] "
            f"{100 * diff.mean:+6.2f} [{100 * diff.low:+5.2f},{100 * diff.high:+5.2f}] "
            f"{100 * row.change.mean:8.2f} {100 * row.chosen:5.0f}% {row.seconds:6.1f}  {verdict}"
        )
    return lines


def summary(rows: Sequence[HarnessRow]) -> str:
    """One line: for each labelling, on how many mixture x N cells it is worse or better than the
    majority beyond the seeds' noise."""
    cells = len({(row.mixture, row.per_clip) for row in rows})
    parts = []
    for name in LABELLINGS[1:]:
        mine = [row for row in rows if row.labelling == name]
        worse = sum(row.worse_than_majority for row in mine)
        better = sum(row.better_than_majority for row in mine)
        parts.append(f"{name} worse in {worse}, better in {better}")
    return f"harness: {cells} mixture x listeners cells against the majority: " + "; ".join(parts)
