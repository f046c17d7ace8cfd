"""The validation harness of model labels (evaluation.stats.label_validation), the ordinal model's
listener weights and the held-out standing that decides which labels a label set recommends
(evaluation.stats.annotator_models), on crowds the models do not assume (evaluation.stats.crowds)."""

import numpy as np
import pytest
from scipy.stats import t as student

from evaluation.stats.annotator_models import GRID, listener_weights, word_posteriors
from evaluation.stats.crowds import BEHAVIOURS, MIXTURES, crowd
from evaluation.stats.label_validation import LABELLINGS, Interval, harness, summary, table


def _fit(mixture, clips, per_clip, seed=0, model="ordinal"):
    study = crowd(mixture, clips=clips, listeners=per_clip, seed=seed)
    clip, annotator, levels = study.annotations(per_clip)
    fit = word_posteriors(
        clip=clip, annotator=annotator, levels=levels, n_annotators=study.listeners, model=model, resamples=0
    )
    return study, fit


@pytest.fixture(scope="module")
def heavy():
    return _fit("20 % heavy", clips=300, per_clip=5)


def test_listeners_who_mark_every_word_do_not_take_the_model_over(heavy):
    """Issue 31: weighted by 1 / sigma^2, listeners who mark every word heavily fitted as sharp
    thresholds and made every word emphasized (error 86 %, the share of words not emphasized)."""
    study, fit = heavy
    truth = study.truth.ravel()
    assert fit.labels().mean() < 2 * truth.mean()
    assert np.mean(fit.labels() != truth) < np.mean(study.majority(5).ravel() != truth)


def test_the_weights_go_to_listeners_who_discriminate():
    informative = np.array([[0.0, np.log(1.2), np.log(0.8)]])  # thresholds near the words' middle
    everything = np.array([[-30.0, np.log(1.2), np.log(0.05)]])  # marks every word, sharply
    nothing = np.array([[30.0, np.log(1.2), np.log(0.05)]])
    random = np.array([[2.0, np.log(1.2), np.log(50.0)]])  # noise only
    parameters = np.concatenate([informative, everything, nothing, random])
    prior = np.exp(-0.5 * (GRID / 1.5) ** 2)
    weight = listener_weights(parameters, prior / prior.sum(), np.ones(4, dtype=bool))
    assert weight[0] > 0.3
    assert np.all(weight[1:] < 1e-3 * weight[0])
    unlabelled = listener_weights(parameters, prior / prior.sum(), np.array([False, True, True, True]))
    assert unlabelled[0] == 0


def test_the_standing_recommends_the_model_where_it_predicts_held_out_listeners_better(heavy):
    study, fit = heavy
    standing = fit.standing
    assert standing.held_out == study.levels.shape[0] * 5 * 15
    assert standing.difference == pytest.approx(standing.model_agreement - standing.majority_agreement)
    assert standing.low < standing.difference < standing.high
    assert fit.recommended() and standing.verdict == "better"
    assert np.array_equal(fit.recommended_labels(), fit.labels())


def test_held_out_majority_is_the_majority_of_the_other_listeners():
    clip = np.zeros(3, dtype=np.int64)
    levels = np.array([[1, 0], [1, 0], [0, 1]])
    fit = word_posteriors(clip=clip, annotator=np.arange(3), levels=levels, model="dawid-skene", resamples=0)
    # Held out in turn, the other two's majority (more than half of two; a tie is no mark):
    # word 0, marks 1, 1, 0: others' (1, 0) no, (1, 0) no, (1, 1) yes: none agrees;
    # word 1, marks 0, 0, 1: others' (0, 1) no, (0, 1) no, (0, 0) no: two agree.
    assert fit.standing.majority_agreement == pytest.approx(2 / 6)
    assert fit.standing.held_out == 6


def test_without_a_better_standing_the_recommended_labels_are_the_majority():
    study, fit = _fit("honest", clips=20, per_clip=3)
    if fit.recommended():
        pytest.fail(f"an honest crowd of 20 clips should not show the model better: {fit.standing}")
    assert np.array_equal(fit.recommended_labels(), study.majority(3).ravel())


def test_intervals_over_seeds_are_student_t():
    values = [0.1, 0.12, 0.09, 0.11]
    interval = Interval.over(values)
    half = student.ppf(0.975, 3) * np.std(values, ddof=1) / 2
    assert (interval.low, interval.high) == pytest.approx((np.mean(values) - half, np.mean(values) + half))
    assert Interval.over([0.2]) == Interval(0.2, 0.2, 0.2)


def test_the_harness_at_a_small_size_covers_every_mixture_and_labelling():
    """The harness in `make test`: every mixture, a small crowd; bench/annotator_models.py prints
    it at full size."""
    rows = harness(mixtures=tuple(MIXTURES), per_clip=(5,), seeds=2, clips=20)
    assert [(row.mixture, row.labelling) for row in rows] == [(m, name) for m in MIXTURES for name in LABELLINGS]
    for row in rows:
        assert 0 <= row.error.low <= row.error.mean <= row.error.high or row.error.low < 0
        assert 0 <= row.error.mean <= 1 and 0 <= row.change.mean <= 1
        if row.labelling == "majority":
            assert row.change.mean == 0 and row.against_majority.mean == 0
    by_key = {(row.mixture, row.labelling): row for row in rows}
    for mixture in MIXTURES:
        recommended = by_key[mixture, "recommended"]
        if recommended.chosen == 0:  # the majority's labels on every seed
            assert recommended.error == by_key[mixture, "majority"].error
    lines = table(rows)
    assert len(lines) == 1 + len(rows)
    assert summary(rows).startswith(f"harness: {len(MIXTURES)} mixture x listeners cells against the majority: ")


def test_every_behaviour_of_the_harness_is_in_a_mixture_of_all():
    assert set(MIXTURES["all"].shares) == set(BEHAVIOURS) - {"honest"}
