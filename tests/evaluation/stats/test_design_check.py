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
from evaluation.stats.pilot_assumptions import assumptions_from_pilot
from evaluation.stats.study_designer import FIT_TOLERANCE, design_study

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
            width * sd_relative_error(kappas[n]),
        )
    return figures


def sd_relative_error(values) -> float:
    """The relative standard error of a sample standard deviation, from the sample's kurtosis
    (sqrt((kurtosis - 1) / 4 r)): 1 / sqrt(2 r) for a normal sample, more for the heavy tails of
    kappa over crowds whose few heavy markers swing it."""
    deviations = np.asarray(values) - np.mean(values)
    kurtosis = float(np.mean(deviations**4) / np.mean(deviations**2) ** 2)
    return math.sqrt(max(kurtosis - 1, 2.0) / (4 * len(values)))


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


def designed_as_the_service_does(mixture: str, seed: int, *, replicates: int = 8):
    """The designer on a pilot of 200 clips with 10 listeners each of the mixture, fed what the
    service feeds it: the pilot's flips, its kappa errors and its resamples (one a pair)."""
    pilot = crowd(mixture, clips=200, listeners=10, seed=seed)
    clip, annotator, levels = pilot.annotations(10)
    estimate = {"clip": clip, "annotator": annotator, "levels": levels, "clips": STUDY_CLIPS}
    return design_study(
        assumptions_from_pilot(**estimate),
        annotators=DESIGNS,
        modes=("fixed",),
        replicates=replicates,
        simulated_clips=150,
        measured=pilot_measurements(clip, levels),
        measured_kappa=pilot_kappas(clip, annotator, levels),
        resamples=pilot_resamples(**estimate, draws=replicates // 2, seed=seed),
        seed=3,
    )


def widths_off(design, truth) -> list[int]:
    """The designs whose kappa width the designer tells and gets more than FIT_TOLERANCE from
    replication's beyond replication's noise."""
    off = []
    for row in design.rows:
        assert row.kappa_can_tell or not row.meets_targets
        width, width_se = truth[row.annotators][2:]
        if row.kappa_can_tell and abs(row.kappa_width - width) > FIT_TOLERANCE * width + 2 * width_se:
            off.append(row.annotators)
    return off


@pytest.mark.parametrize("mixture", ["issue: lazy + heavy", "20 % heavy"])
def test_the_designers_kappa_widths_hold_on_nine_pilots_in_ten_or_it_says_it_cannot_tell(mixture):
    """Issue 31: the kappa widths within 25 % of replication on fresh crowds (new clips, new
    listeners), or the designer says it cannot tell. Which heavy markers a pilot of 100 listeners
    draws moves its kappa error by 11 % (one pilot in a hundred by 25 %), and the designer's
    widths with it: the designer tells a width only where its uncertainty (the pilot's kappa
    error's, its crowd's over the resamples, its own simulation's) puts it within 25 % in 90 %
    of pilots. So: over 12 pilots, at most 2 with a width told and missed. Before the jackknife
    (the linearized error gave 0.65 of the spread here) it told widths 1.4 to 1.5 times
    replication's on the issue's pilot."""
    truth = replicated(mixture, clips=STUDY_CLIPS, replicates=300)
    told = missed = 0
    for seed in range(12):
        design = designed_as_the_service_does(mixture, seed)
        told += sum(row.kappa_can_tell for row in design.rows)
        missed += bool(widths_off(design, truth))
        assert design.check["kappa_reason"]
    assert missed <= 2
    assert told >= len(DESIGNS) * 12 / 3  # the designer does not pass by never telling


@pytest.mark.parametrize("mixture", ["20 % silent", "honest"])
def test_on_crowds_of_plain_listeners_the_designer_tells_every_kappa_width_and_holds(mixture):
    truth = replicated(mixture, clips=STUDY_CLIPS, replicates=300)
    for seed in range(3):
        design = designed_as_the_service_does(mixture, seed)
        assert all(row.kappa_can_tell for row in design.rows), design.check["kappa_reason"]
        assert widths_off(design, truth) == []
