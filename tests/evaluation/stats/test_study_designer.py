"""The study designer against a direct simulation of the same design, exact and probabilistic
stopping's rules (the latter against the live rule, clip by clip), and the pilot's estimates
against the crowd that made the pilot."""

import math
from dataclasses import replace

import numpy as np
import pytest

from evaluation.stats.alpha import alpha
from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.pilot_assumptions import assumptions_from_pilot
from evaluation.stats.simulated_truth import simulated_truth_study
from evaluation.stats.stopping import StoppingRule, clip_settled
from evaluation.stats.study_designer import (
    DIFFERING_OF_FLIP,
    DesignAssumptions,
    ProbabilisticStopping,
    Targets,
    design_study,
    fitted_prior,
    probabilistic_stop_points,
    simulated_levels,
    stop_points,
)

CROWD = DesignAssumptions(emphasis_rate=0.15, accuracy=0.85, spammers=0.1, clips=120, durations=(4.0,) * 120)


def direct_simulation(assumptions: DesignAssumptions, n: int, replicates: int, seed: int):
    """The design written out word by word, listener by listener: per replicate, kappa, alpha and
    the share of words whose label changes when listener n + 1 is added."""
    rng = np.random.default_rng(seed)
    a = assumptions
    rho = a.heterogeneity
    overall = a.emphasis_rate * a.accuracy + (1 - a.emphasis_rate) * (1 - a.accuracy)
    kappas, alphas, flips = [], [], []
    for _ in range(replicates):
        binary_counts, level_counts, flipped = [], [], 0
        for _clip in range(a.clips):
            spammer = rng.random(n + 1) < a.spammers
            for _word in range(a.words_per_clip):
                emphasized = rng.random() < a.emphasis_rate
                mean = a.accuracy if emphasized else 1 - a.accuracy
                p = rng.beta(mean * (1 - rho) / rho, (1 - mean) * (1 - rho) / rho)
                levels = []
                for listener in range(n + 1):
                    marked = rng.random() < (overall if spammer[listener] else p)
                    heavy = rng.random() < (a.heavy_share if emphasized else a.heavy_share / 3)
                    levels.append(int(marked) + int(marked and heavy))
                first = levels[:n]
                marks = sum(level >= 1 for level in first)
                binary_counts.append([n - marks, marks])
                level_counts.append([first.count(0), first.count(1), first.count(2)])
                flipped += (2 * marks > n) != (2 * (marks + (levels[n] >= 1)) > n + 1)
        kappas.append(fleiss_kappa(np.array(binary_counts)).value)
        alphas.append(alpha(np.array(level_counts), "ordinal").value)
        flips.append(flipped / (a.clips * a.words_per_clip))
    return np.array(kappas), np.array(alphas), np.array(flips)


def test_the_designers_figures_agree_with_a_direct_simulation_within_their_monte_carlo_error():
    replicates = 24
    # One clip a listener: the direct simulation draws each annotation's listener afresh.
    crowd = replace(CROWD, clips_per_task=1)
    design = design_study(crowd, annotators=(7,), modes=("fixed",), replicates=replicates, seed=1)
    row = design.rows[0]
    kappas, alphas, flips = direct_simulation(crowd, 7, replicates, seed=2)

    def close(ours, theirs, our_se, their_se):
        return abs(ours - theirs) <= 3 * math.hypot(our_se, their_se)

    width = 2 * 1.959964 * kappas.std(ddof=1)
    width_se = width / math.sqrt(2 * (replicates - 1))
    assert close(row.kappa_width, width, row.kappa_width_se, width_se)
    alpha_width = 2 * 1.959964 * alphas.std(ddof=1)
    assert close(row.alpha_width, alpha_width, row.alpha_width_se, alpha_width / math.sqrt(2 * (replicates - 1)))
    assert close(row.flip_share, flips.mean(), row.flip_share_se, flips.std(ddof=1) / math.sqrt(replicates))
    kappa_se = kappas.std(ddof=1) / math.sqrt(replicates)
    assert close(row.kappa, kappas.mean(), kappa_se, kappa_se)
    assert row.annotations_per_clip == 7 and row.annotations_per_clip_se == 0
    assert row.participant_hours == pytest.approx(7 * 120 * 4.0 * CROWD.seconds_per_audio_second / 3600)
    assert row.cost == pytest.approx(row.participant_hours * 15.0)


def test_exact_stopping_keeps_every_binary_label_of_the_full_design():
    rng = np.random.default_rng(3)
    for target in (3, 4, 7, 10):
        marks_each = rng.random((300, target, 6)) < rng.random((300, 1, 6))
        marks = np.cumsum(marks_each, axis=1)
        stopped = stop_points(marks, target)
        at_stop = marks[np.arange(300), stopped - 1]  # (clips, words) marks when the clip stopped
        full = 2 * marks[:, -1] > target
        # Decided at the stop: emphasized already, or out of reach of a majority.
        assert np.array_equal(2 * at_stop > target, full)
        assert np.all((2 * at_stop > target) | (2 * (at_stop + target - stopped[:, None]) <= target))
        assert stopped.min() >= math.ceil(target / 2) and stopped.max() <= target


def test_stopping_saves_annotations_and_keeps_the_flip_share():
    design = design_study(CROWD, annotators=(10,), replicates=4, seed=5)
    fixed, exact, probabilistic = design.rows
    assert (fixed.mode, exact.mode, probabilistic.mode) == ("fixed", "exact", "probabilistic")
    assert exact.annotations_per_clip < fixed.annotations_per_clip == 10
    assert exact.flip_share == fixed.flip_share
    assert exact.participant_hours < fixed.participant_hours
    assert fixed.differing_share == exact.differing_share == 0  # exact stopping keeps every binary label


def test_probabilistic_stopping_saves_more_and_changes_few_labels():
    honest = DesignAssumptions(clips=200, durations=(4.0,) * 200)
    design = design_study(honest, annotators=(12, 15), replicates=6, seed=9)
    rows = {(row.annotators, row.mode): row for row in design.rows}
    for n in (12, 15):
        fixed, exact, probabilistic = (rows[(n, mode)] for mode in ("fixed", "exact", "probabilistic"))
        # Common random numbers: the same listeners, so the saving is the rule's, not noise.
        assert probabilistic.annotations_per_clip < exact.annotations_per_clip - 0.15
        assert probabilistic.participant_hours < exact.participant_hours < fixed.participant_hours
        # About epsilon a stopped word at most.
        assert 0 <= probabilistic.differing_share <= 0.02
        assert probabilistic.flip_share == pytest.approx(fixed.flip_share, abs=0.003)
    # Some labels change (the rule takes a risk); a rare event: a few words in 6 x 200 clips.
    changed = [rows[(n, "probabilistic")] for n in (12, 15)]
    assert sum(row.differing_share for row in changed) > 0 and max(row.differing_share_se for row in changed) > 0
    assert design.as_dict()["probabilistic"] == {"epsilon": 0.02, "minimum": 3}
    loose = design_study(honest, annotators=(12,), replicates=6, seed=9, probabilistic=ProbabilisticStopping(0.3, 2))
    assert loose.rows[2].annotations_per_clip < rows[(12, "probabilistic")].annotations_per_clip
    assert loose.rows[2].differing_share > 5 * rows[(12, "probabilistic")].differing_share


def test_probabilistic_stop_points_are_the_live_rules_clip_by_clip():
    rng = np.random.default_rng(11)
    levels = simulated_levels(CROWD, clips=60, annotators=11, rng=rng)
    marks = np.cumsum(levels >= 1, axis=1)
    heavy = np.cumsum(levels == 2, axis=1)
    at_minimum = 0
    for epsilon, minimum, target in ((0.02, 3, 10), (0.1, 2, 7), (0.02, 5, 4), (0.4, 4, 10)):
        settings = ProbabilisticStopping(epsilon, minimum)
        prior = fitted_prior(levels, minimum)
        stops = probabilistic_stop_points(marks[:, :target], target, settings, prior)
        rule = StoppingRule("probabilistic", target=target, epsilon=epsilon, minimum=minimum)
        for clip in range(60):
            live = next(
                seen
                for seen in range(1, target + 1)
                if clip_settled(rule, marks[clip, seen - 1], heavy[clip, seen - 1], seen, prior)
            )
            assert stops[clip] == live, (epsilon, minimum, target, clip)
        at_minimum += int((stops == minimum).sum()) if minimum < target else 0
    assert at_minimum > 0  # the cases test the minimum, where the rule would stop sooner without it
    assert fitted_prior(levels, 1) == fitted_prior(levels[:, :1], 1)  # one annotation: Jeffreys', as live


def test_the_recommendation_is_the_cheapest_design_that_meets_the_targets():
    design = design_study(CROWD, annotators=(3, 5, 7, 9, 11), replicates=4, targets=Targets(1.0, 0.03), seed=6)
    meeting = [row for row in design.rows if row.meets_targets]
    best = min(meeting, key=lambda row: row.participant_hours)
    assert (design.recommendation["annotators"], design.recommendation["mode"]) == (best.annotators, best.mode)
    assert all(row.flip_share <= 0.03 for row in meeting)
    none = design_study(CROWD, annotators=(3, 4), replicates=3, targets=Targets(0.0, 0.0), seed=6)
    assert not none.recommendation["meets_targets"] and "no design" in none.recommendation["reason"]


def test_a_probabilistic_design_that_changes_too_many_labels_is_not_recommended():
    targets = Targets(1.0, 0.05)
    loose = ProbabilisticStopping(epsilon=0.5, minimum=1)
    design = design_study(CROWD, annotators=(5, 9, 13), replicates=4, targets=targets, probabilistic=loose, seed=6)
    probabilistic = [row for row in design.rows if row.mode == "probabilistic"]
    assert all(row.differing_share > DIFFERING_OF_FLIP * targets.flip_share for row in probabilistic)
    assert not any(row.meets_targets for row in probabilistic)
    assert design.recommendation["mode"] in ("fixed", "exact") and design.recommendation["meets_targets"]
    careful = design_study(CROWD, annotators=(12, 13), replicates=4, targets=targets, seed=6)
    assert careful.recommendation["mode"] == "probabilistic"
    assert careful.recommendation["differing_share"] <= DIFFERING_OF_FLIP * targets.flip_share


def test_a_pilot_gives_back_the_crowd_that_made_it():
    truth = DesignAssumptions(emphasis_rate=0.2, accuracy=0.85, heterogeneity=0.2, clips=400)
    rng = np.random.default_rng(8)
    levels = simulated_levels(truth, clips=400, annotators=6, rng=rng)  # (clips, annotators, words)
    # Tasks of 10 clips: the six listeners of clips 0-9 are annotators 0-5, of clips 10-19 6-11, ...
    clip = np.repeat(np.arange(400), 6)
    annotator = (clip // 10) * 6 + np.tile(np.arange(6), 400)
    pilot = assumptions_from_pilot(clip=clip, annotator=annotator, levels=levels.reshape(400 * 6, -1), clips=1000)
    assert pilot.emphasis_rate == pytest.approx(0.2, abs=0.04)
    assert pilot.clips == 1000 and pilot.words_per_clip == 15
    assert pilot.accuracy == pytest.approx(0.85, abs=0.05)
    assert pilot.spammers < 0.05
    assert pilot.heterogeneity == pytest.approx(0.2, abs=0.1)


def test_a_pilot_finds_its_spammers():
    """Spammers are people: in the simulation with a known truth, a tenth of the annotators (each
    on a task of 20 clips) mark at random."""
    pilot = simulated_truth_study(clips=300, per_clip=6, spammers=0.15, seed=4)
    data = pilot.data
    estimated = assumptions_from_pilot(clip=data.clip, annotator=data.annotator, levels=data.levels, clips=300)
    actual = float(np.mean(pilot.kind[data.annotator] == 1))
    assert estimated.spammers == pytest.approx(actual, abs=0.06)


def test_bad_assumptions_are_refused_with_the_reason():
    with pytest.raises(ValueError, match=r"accuracy must be above 0\.5"):
        DesignAssumptions(accuracy=0.4)
    with pytest.raises(ValueError, match="at least two replicates"):
        design_study(CROWD, replicates=1)
    with pytest.raises(ValueError, match="unknown design mode"):
        design_study(CROWD, modes=("reallocate",))
    with pytest.raises(ValueError, match=r"epsilon must be between 0\.0001 and 0\.5"):
        ProbabilisticStopping(epsilon=0.0)
    with pytest.raises(ValueError, match="epsilon must be"):
        ProbabilisticStopping(epsilon=0.7)
    with pytest.raises(ValueError, match="minimum must be a whole number"):
        ProbabilisticStopping(minimum=0)
    with pytest.raises(ValueError, match="minimum must be a whole number"):
        ProbabilisticStopping(minimum=2.5)
    with pytest.raises(ValueError, match="no annotations yet"):
        assumptions_from_pilot(clip=np.zeros(0), annotator=np.zeros(0), levels=np.zeros((0, 3)), clips=5)
