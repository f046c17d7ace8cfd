"""The study designer for a study: its clips (how many, how long, how many words) and, from a pilot,
its own first annotations, turned into evaluation.stats.study_designer's assumptions and designs
(fixed, exact stopping and probabilistic stopping at the epsilon and minimum asked).

Nothing is stored: a design is computed on request, in a few seconds at the default replicates
(the page, the API and the `design_study` command all call `study_design_compute`).
"""

from typing import Any

import numpy as np

from annotation.models import Study
from annotation.refusals import Refused
from annotation.selectors.study_data import study_data
from evaluation.stats.design_check import pilot_kappas, pilot_measurements, pilot_resamples
from evaluation.stats.pilot_assumptions import assumptions_from_pilot
from evaluation.stats.study_designer import (
    DesignAssumptions,
    ProbabilisticStopping,
    Targets,
    design_study,
)

SOURCES = ("assumptions", "pilot")
DEFAULT_REPLICATES = 12
DEFAULT_SIMULATED_CLIPS = 150


class DesignRefused(Refused, ValueError):
    """The study cannot be designed as asked; the message says why."""


def study_design_compute(
    *,
    study: Study,
    source: str = "assumptions",
    assumptions: dict | None = None,
    targets: dict | None = None,
    probabilistic: dict | None = None,
    replicates: int = DEFAULT_REPLICATES,
    simulated_clips: int = DEFAULT_SIMULATED_CLIPS,
    seed: int = 0,
    annotators: tuple[int, ...] | None = None,
    modes: tuple[str, ...] | None = None,
):
    """The designs of `study` (evaluation.stats.study_designer.Design). `assumptions`: any field of
    DesignAssumptions to set (with source "pilot", they replace what the pilot gives); `probabilistic`:
    epsilon and minimum of the probabilistic designs (ProbabilisticStopping's defaults otherwise);
    `annotators` and `modes`: only these designs (the designer's whole grid by default)."""
    if not study.capabilities.answers_are_word_marks:
        raise DesignRefused(f"{study.slug} is a listening form; the designer plans emphasis studies")
    if source not in SOURCES:
        raise DesignRefused(f"unknown source {source!r}; choose one of {', '.join(SOURCES)}")
    given = dict(assumptions or {})
    data = study_data(study=study)
    clips = len(data.clip_keys)
    if clips == 0:
        raise DesignRefused(f"{study.slug} has no clips to plan for")
    assert data.clip_durations is not None  # StudyData.__post_init__ fills it
    durations = np.where(np.isfinite(data.clip_durations), data.clip_durations, 5.0)
    from_pilot: dict[str, Any] = {}
    try:
        if source == "pilot":
            estimate = {
                "clip": data.clip,
                "annotator": data.annotator,
                "levels": data.levels,
                "clips": clips,
                "durations": durations,
                "seconds": data.seconds,
                "source": f"pilot of {study.slug}: {data.n_annotations} annotations",
                **given,
            }
            planned = assumptions_from_pilot(**estimate)
            # What the pilot itself says (design_check): its own flips, its kappa errors (clustered by
            # clip and listener, at each number of listeners) and its uncertainty, one resample for
            # each pair of replicates.
            from_pilot = {
                "measured": pilot_measurements(data.clip, data.levels),
                "measured_kappa": pilot_kappas(data.clip, data.annotator, data.levels),
                "resamples": pilot_resamples(**estimate, draws=max(2, replicates // 2), seed=seed),
            }
        else:
            words = round(float(np.mean(data.clip_words))) if data.clip_words.size else 15
            defaults = {
                "words_per_clip": max(words, 1),
                "clips": clips,
                "durations": tuple(durations.tolist()),
                "clips_per_task": study.clips_per_task,
            }
            planned = DesignAssumptions(**{**defaults, **given})
        return design_study(
            planned,
            targets=Targets(**(targets or {})),
            probabilistic=ProbabilisticStopping(**(probabilistic or {})),
            replicates=replicates,
            simulated_clips=simulated_clips,
            seed=seed,
            **from_pilot,
            **_given_choices(annotators=annotators, modes=modes),
        )
    except (TypeError, ValueError) as error:
        raise DesignRefused(str(error)) from None


def _given_choices(*, annotators, modes) -> dict[str, Any]:
    """The designs to compare that the caller named; design_study's own defaults for the rest."""
    return {name: value for name, value in (("annotators", annotators), ("modes", modes)) if value is not None}
