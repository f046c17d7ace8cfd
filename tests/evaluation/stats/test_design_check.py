"""The study designer on crowds it was not built on (evaluation.stats.crowds, issue 31): its flip
shares and kappa widths against replication of the same design on the true crowd, and the pilot's
own measurements it checks itself against. Small sizes; bench/study_designer.py runs every mixture
at full size."""

import itertools
import math

import numpy as np
import pytest

from evaluation.stats.crowds import MIXTURES, crowd
from evaluation.stats.design_check import (
    measured_flips,
    measured_kappa,
    pilot_kappas,
    pilot_measurements,
    pilot_resamples,
)
from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.study_designer import FIT_TOLERANCE, assumptions_from_pilot, design_study

DESIGNS = (5, 8, 12)
STUDY_CLIPS = 600


def replicated(mixture: str, *, clips: int, replicates: int) -> dict:
    """Per design: the flip share (mean, se) and the kappa width (2 x 1.96 x sd, its se) of the
    design run on fresh crowds of the mixture."""
    flips = {n: [] for n in DESIGNS}
    kappas = {n: [] for n in DESIGNS}
    for replicate in range(replicates):
        made = crowd(mixture, clips=clips, listeners=max(DESIGNS) + 1, seed=10_000 + replicate)
        marks = np.cumsum(made.levels >= 1, axis=1)
        for n in DESIGNS:
            first = marks[:, n - 1]
            flips[n].append(float(((2 * first > n) != (2 * marks[:, n] > n + 1)).mean()))
            kappas[n].append(fleiss_kappa(np.stack([n - first.ravel(), first.ravel()], axis=1)).value)
    figures = {}
    for n in DESIGNS:
        width = 2 * 1.959964 * float(np.std(kappas[n], ddof=1))
        figures[n] = (
            float(np.mean(flips[n])),
            float(np.std(flips[n], ddof=1) / math.sqrt(replicates)),
            width,
            width / math.sqrt(2 * (replicates - 1)),
        )
    return figures


def designed(mixture: str, *, seed: int = 7):
    """The designer fed a pilot of 200 clips with 10 listeners each of the mixture, as the service does."""
    pilot = crowd(mixture, clips=200, listeners=10, seed=seed)
    clip, annotator, levels = pilot.annotations(10)
    estimate = {"clip": clip, "annotator": annotator, "levels": levels, "clips": STUDY_CLIPS}
    return design_study(
        assumptions_from_pilot(**estimate),
        annotators=DESIGNS,
        modes=("fixed",),
        replicates=16,
        simulated_clips=150,
        measured=pilot_measurements(clip, levels),
        measured_kappa=measured_kappa(clip, levels),
        resamples=pilot_resamples(**estimate, draws=8),
    )


def test_measured_flips_count_every_order_of_a_clips_listeners_exactly():
    rng = np.random.default_rng(3)
    clips, listeners, words, n = 24, 5, 3, 3
    levels = (rng.random((clips, listeners, words)) < rng.random((clips, 1, words))).astype(np.int8)
    clip = np.repeat(np.arange(clips), listeners)
    figure = measured_flips(clip, levels.reshape(-1, words), n)
    by_order = []
    for c in range(clips):
        for order in itertools.permutations(range(listeners)):
            marks = levels[c, list(order)].cumsum(axis=0)
            by_order.append((2 * marks[n - 1] > n) != (2 * marks[n] > n + 1))
    assert figure.share == pytest.approx(float(np.mean(by_order)), abs=1e-12)
    assert figure.n == n and figure.clips == clips and figure.se > 0
    assert measured_flips(clip, levels.reshape(-1, words), listeners) is None  # no clip has 6 listeners


def test_the_designer_flips_the_issues_lazy_crowd_as_replication_does():
    """Issue 31: fed a pilot of the lazy mixture, the old designer said 1.61 % flips at N = 8
    where replication gave 3.03 %."""
    design = designed("issue: lazy + heavy")
    truth = replicated("issue: lazy + heavy", clips=STUDY_CLIPS, replicates=10)
    row = next(row for row in design.rows if row.annotators == 8)
    flips, flips_se = truth[8][:2]
    assert design.check["can_tell"] and row.can_tell
    assert abs(row.flip_share - flips) <= FIT_TOLERANCE * flips + 2 * math.hypot(row.flip_share_se, flips_se)
    assert row.flip_share_low <= row.flip_share <= row.flip_share_high


def test_on_every_harness_mixture_the_designers_flip_shares_hold_or_it_says_it_cannot_tell():
    told = rows = 0
    for mixture in sorted(MIXTURES):
        design = designed(mixture)
        truth = replicated(mixture, clips=STUDY_CLIPS, replicates=8)
        for row in design.rows:
            rows += 1
            if not row.can_tell:
                continue
            told += 1
            flips, flips_se = truth[row.annotators][:2]
            noise = 2 * math.hypot(row.flip_share_se, flips_se)
            assert abs(row.flip_share - flips) <= FIT_TOLERANCE * flips + noise, (mixture, row.annotators)
    assert told >= rows / 2  # the designer does not pass by never telling


def test_a_listener_clustered_kappa_error_is_the_clip_clustered_one_when_every_annotation_has_its_own_listener():
    pilot = crowd("20 % silent", clips=60, listeners=6, seed=2)
    clip, _, levels = pilot.annotations(6)
    by_clip = measured_kappa(clip, levels, n=5)
    both = measured_kappa(clip, levels, annotator=np.arange(clip.size), n=5)
    assert both.listeners and not by_clip.listeners and (both.n, both.clips) == (by_clip.n, by_clip.clips) == (5, 60)
    assert both.se == pytest.approx(by_clip.se, rel=0.02)


def test_the_pilots_kappa_error_clustered_by_listener_too_is_what_fresh_pilots_give():
    """A listener hears a task of 20 clips: with a fifth of them silent, which listeners a pilot
    draws moves its kappa more than its clips do. Clustered by clip alone, the pilot's error is
    about half of what fresh pilots of the same crowd give; by clip and listener, it is theirs."""
    kappas, by_both, by_clip = [], [], []
    for seed in range(24):
        pilot = crowd("20 % silent", clips=200, listeners=8, seed=300 + seed)
        clip, annotator, levels = pilot.annotations(8)
        marks = (levels >= 1).reshape(200, 8, -1).sum(axis=1).ravel()
        kappas.append(fleiss_kappa(np.stack([8 - marks, marks], axis=1)).value)
        by_both.append(measured_kappa(clip, levels, annotator=annotator).se)
        by_clip.append(measured_kappa(clip, levels).se)
    sd = float(np.std(kappas, ddof=1))
    noise = 2 * sd / math.sqrt(2 * (len(kappas) - 1))
    assert abs(np.mean(by_both) - sd) <= FIT_TOLERANCE * sd + noise
    assert np.mean(by_clip) < 0.7 * sd
    assert [figure.n for figure in pilot_kappas(clip, annotator, levels)] == list(range(2, 9))


@pytest.mark.parametrize(
    "mixture",
    [
        "20 % silent",
        pytest.param(
            "issue: lazy + heavy",
            marks=pytest.mark.xfail(
                strict=True,
                reason="known (issue 31 item 4): at 600 clips the designer gives 0.12 at N = 5 where replication "
                "gives 0.065, and its check against the pilot's kappa error passes (the pilot's error at 5 "
                "listeners agrees with the designer's crowd); at 2000 clips the bench says cannot tell",
            ),
        ),
    ],
)
def test_the_designers_kappa_widths_hold_against_replication_or_it_says_it_cannot_tell(mixture):
    """Issue 31: the kappa widths of a pilot's designs within 25 % of replication on fresh crowds
    (new clips, new listeners), beyond the two's noise, or the designer says it cannot tell."""
    pilot = crowd(mixture, clips=200, listeners=10, seed=7)
    clip, annotator, levels = pilot.annotations(10)
    design = design_study(
        assumptions_from_pilot(clip=clip, annotator=annotator, levels=levels, clips=STUDY_CLIPS),
        annotators=DESIGNS,
        modes=("fixed",),
        replicates=48,
        simulated_clips=150,
        measured_kappa=pilot_kappas(clip, annotator, levels),
        seed=3,
    )
    truth = replicated(mixture, clips=STUDY_CLIPS, replicates=16)
    told = 0
    for row in design.rows:
        assert row.kappa_can_tell or not row.meets_targets
        if not row.kappa_can_tell:
            continue
        told += 1
        width, width_se = truth[row.annotators][2:]
        noise = 2 * math.hypot(row.kappa_width_se, width_se)
        assert abs(row.kappa_width - width) <= FIT_TOLERANCE * width + noise, (row.annotators, row.kappa_width, width)
    assert told >= 2 and design.check["kappa_reason"]
