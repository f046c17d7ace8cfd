"""The design check of model allocation and the ordinal predictor against the fixed design
(evaluation.stats.allocation_check), on pilots of crowds built apart from the project's models
(evaluation.stats.crowds): spammers, where allocation with the model's labels helps, and lazy
listeners who mark only the first content word, where it does not (issue 31)."""

import numpy as np
import pytest

from evaluation.stats.allocation_check import (
    BEATS,
    CANNOT_TELL,
    NON_INFERIORITY,
    CheckedDesign,
    _majority,
    allocation_verdicts,
    greedy_allocation,
    model_labels,
    pilot_model_standing,
)
from evaluation.stats.crowds import crowd
from evaluation.stats.design_check import pilot_resamples
from evaluation.stats.study_designer import DesignAssumptions, simulated_crowd

PILOT_CLIPS, SIMULATED_CLIPS, RESAMPLES = 80, 40, 3


def pilot_resampled(mixture: str, draws: int = RESAMPLES):
    """A pilot of 80 clips, 10 listeners each, and its resamples, as the designer draws them."""
    pilot = crowd(mixture, clips=PILOT_CLIPS, listeners=10, words=12, seed=1).study_data(10)
    return pilot_resamples(
        clip=pilot.clip, annotator=pilot.annotator, levels=pilot.levels, clips=PILOT_CLIPS, draws=draws, seed=0
    )


def test_with_spammers_model_allocation_beats_the_fixed_design():
    # Four resamples, as the service's default: with three, Student's t asks for 2.9 standard errors.
    drawn = pilot_resampled("20 % spammers", draws=4)
    verdict = allocation_verdicts(drawn, simulated_clips=SIMULATED_CLIPS)["allocate"]
    assert verdict.verdict == BEATS and verdict.beats_fixed
    assert verdict.difference + 2.35 * verdict.difference_se < 0  # t(3)'s one-sided 5 % bound
    assert verdict.error < verdict.fixed_error and verdict.annotations_per_clip == pytest.approx(10)
    assert verdict.reason.startswith("Model allocation gives a word error of")
    assert verdict.reason.endswith("it beats the fixed design beyond the replicates' noise.")


def test_with_lazy_listeners_neither_design_is_said_to_beat_the_fixed_design():
    verdicts = allocation_verdicts(pilot_resampled("30 % lazy first"), simulated_clips=SIMULATED_CLIPS)
    assert not verdicts["allocate"].beats_fixed and not verdicts["ordinal"].beats_fixed
    assert verdicts["allocate"].difference > 0  # worse on average, if not beyond the noise
    assert "use the fixed design" in verdicts["allocate"].reason


def test_where_the_designer_cannot_tell_neither_can_the_check():
    check = {"can_tell": False, "reason": "cannot tell: the pilot flips 9 % of its labels, the designer's crowd 4 %"}
    verdicts = allocation_verdicts(pilot_resampled("20 % spammers", draws=2), fit_check=check, simulated_clips=20)
    for verdict in verdicts.values():
        assert verdict.verdict == CANNOT_TELL and not verdict.beats_fixed
        assert "the designer cannot tell for this pilot (cannot tell: the pilot flips 9 %" in verdict.reason


def test_allocation_spends_the_fixed_budget_within_its_bounds():
    design = CheckedDesign(target=6, minimum=3, maximum=9)
    levels, person, _ = simulated_crowd(
        DesignAssumptions(spammers=0.2, words_per_clip=8), clips=20, annotators=9, rng=np.random.default_rng(0)
    )
    counts = greedy_allocation(levels, person, design)
    assert counts.sum() == 6 * 20 and counts.min() >= 3 and counts.max() <= 9 and counts.max() > 6


@pytest.mark.parametrize(("target", "minimum", "maximum"), [(5, 5, 10), (10, 3, 8), (4, 0, 8)])
def test_the_check_needs_room_to_allocate(target, minimum, maximum):
    with pytest.raises(ValueError, match="minimum < target <= maximum"):
        CheckedDesign(target=target, minimum=minimum, maximum=maximum)


def test_the_check_needs_two_resamples_for_its_noise():
    with pytest.raises(ValueError, match="at least two"):
        allocation_verdicts((DesignAssumptions(),))


def standing_and_truth(mixture: str, seed: int):
    """A pilot of 200 clips x 10 listeners: the model's standing on it (no truth), and the model's
    labels' word error and the majority's against the truth of the same pilot."""
    made = crowd(mixture, clips=200, listeners=10, seed=seed)
    data = made.study_data(10)
    standing = pilot_model_standing(clip=data.clip, annotator=data.annotator, levels=data.levels)
    counts = np.full(200, 10)
    model = model_labels(made.levels, made.listener, counts)
    majority = _majority(made.levels, counts)
    return standing, float((model != made.truth).mean()), float((majority != made.truth).mean())


def test_on_the_pilot_itself_the_standing_sees_a_fit_the_lazy_listeners_took_over():
    """Issue 31: with 30 % of listeners marking only the first content word and 10 % every word,
    the model's fit took the lazy listeners' consistency for the crowd's hearing in half the
    pilots; the designer's simulation, fitted to the pilot's marks, still said allocation beats.
    Without any truth, the standing on the pilot tells the two apart as the truth does."""
    collapsed, model_error, majority_error = standing_and_truth("issue: lazy + heavy", 301)
    assert model_error > majority_error + 0.04  # the truth: the model's labels are far worse
    assert collapsed.low <= -NON_INFERIORITY and collapsed.verdict == "worse"
    held, model_error, majority_error = standing_and_truth("issue: lazy + heavy", 300)
    assert model_error < majority_error  # the same crowd, a pilot whose fit held
    assert held.low > -NON_INFERIORITY and held.verdict == "better"


def test_a_model_not_non_inferior_on_the_pilot_leaves_both_designs_unoffered():
    standing, _, _ = standing_and_truth("issue: lazy + heavy", 301)
    drawn = pilot_resampled("20 % spammers", draws=4)
    gated = allocation_verdicts(drawn, standing=standing, simulated_clips=SIMULATED_CLIPS)
    assert allocation_verdicts(drawn, simulated_clips=SIMULATED_CLIPS)["allocate"].verdict == BEATS
    for verdict in gated.values():
        assert verdict.verdict == CANNOT_TELL and not verdict.beats_fixed
        assert "held-out listener" in verdict.reason and "not to be trusted" in verdict.reason


def test_on_an_honest_crowd_the_model_is_non_inferior_and_the_simulation_decides():
    standing, _, _ = standing_and_truth("honest", 300)
    assert standing.low > -NON_INFERIORITY
