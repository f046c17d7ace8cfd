"""The crowds built independently of the annotator models (evaluation.stats.crowds)."""

import numpy as np
import pytest

from evaluation.stats.crowds import BEHAVIOURS, MIXTURES, Mixture, crowd


def test_the_same_seed_gives_the_same_crowd_and_another_seed_another():
    first, again, other = (crowd("all", clips=60, seed=seed) for seed in (3, 3, 4))
    assert np.array_equal(first.levels, again.levels)
    assert np.array_equal(first.truth, again.truth)
    assert not np.array_equal(first.levels, other.levels)


def test_each_behaviour_marks_as_described():
    shares = {name: 1 / len(BEHAVIOURS) for name in BEHAVIOURS[1:]}
    study = crowd(Mixture("every kind", shares), clips=200, listeners=15, seed=0)
    kind = study.behaviour[study.listener]
    levels = study.levels
    index = BEHAVIOURS.index
    assert (levels[kind == index("heavy")] == 2).all()
    assert (levels[kind == index("silent")] == 0).all()
    lazy = levels[kind == index("lazy_first")]
    assert ((lazy >= 1).sum(axis=1) == 1).all()
    clips = np.nonzero(kind == index("lazy_first"))[0]
    assert np.array_equal(np.argmax(lazy, axis=1), np.argmax(study.content[clips], axis=1))
    fixed = levels[kind == index("lazy_position")]
    assert ((fixed >= 1).sum(axis=1) == 1).all() and (np.argmax(fixed, axis=1) <= 2).all()
    spam = levels[kind == index("spammer")]
    assert np.allclose(np.bincount(spam.ravel(), minlength=3) / spam.size, 1 / 3, atol=0.02)
    confused = levels[kind == index("confused")]
    true = study.true_levels[np.nonzero(kind == index("confused"))[0]]
    assert (confused == true).mean() == pytest.approx(0.65, abs=0.02)
    honest = levels[kind == index("honest")]
    assert 0.05 < (honest >= 1).mean() < 0.3


def test_a_listener_keeps_one_behaviour_and_hears_a_clip_once():
    study = crowd("all", clips=100, listeners=10, clips_per_task=20, seed=1)
    assert all(np.unique(row).size == row.size for row in study.listener)
    assert np.bincount(study.listener.ravel()).max() <= 20
    assert study.behaviour.size == study.listeners == study.listener.max() + 1


def test_designs_of_fewer_listeners_take_the_first_slots():
    study = crowd("honest", clips=30, listeners=15, seed=2)
    clip, annotator, levels = study.annotations(5)
    assert np.array_equal(clip, np.repeat(np.arange(30), 5))
    assert np.array_equal(annotator.reshape(30, 5), study.listener[:, :5])
    assert np.array_equal(levels.reshape(30, 5, -1), study.levels[:, :5])
    assert np.array_equal(study.majority(5), 2 * (study.levels[:, :5] >= 1).sum(axis=1) > 5)
    data = study.study_data(5)
    assert data.levels.shape == (150, 15) and len(data.clip_keys) == 30


def test_the_truth_is_the_script_and_about_one_word_in_seven():
    study = crowd("honest", clips=2000, seed=0)
    assert study.truth.mean() == pytest.approx(2 / 15, abs=0.01)
    # The script stresses content words: a function word only where a clip has too few content words.
    assert study.truth[~study.content].mean() < 0.01 < study.truth[study.content].mean()


@pytest.mark.parametrize(
    ("mixture", "clips", "message"),
    [("nobody", 10, "unknown mixture 'nobody'"), ("honest", 0, "at least 1")],
)
def test_bad_recipes_are_refused_by_name(mixture, clips, message):
    with pytest.raises(ValueError, match=message):
        crowd(mixture, clips=clips)


def test_an_unknown_behaviour_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown behaviours \\['liar'\\]"):
        Mixture("x", {"liar": 0.1})


def test_shares_over_one_are_refused():
    with pytest.raises(ValueError, match="add up to at most 1"):
        Mixture("too many", {"spammer": 0.7, "heavy": 0.5})


def test_the_harness_names_every_behaviour():
    used = {name for mixture in MIXTURES.values() for name in mixture.shares}
    assert used == set(BEHAVIOURS) - {"honest"}
