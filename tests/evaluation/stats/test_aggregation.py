"""Word labels, subsampling and majority votes. No database."""

import hashlib

import numpy as np
import pytest

from evaluation.stats.aggregation import (
    binary_labels,
    keyed_priorities,
    keyed_priority,
    level_counts,
    majority_vote,
    scalar_labels,
    subsample,
)
from evaluation.stats.ratings import binary_counts


def test_binary_label_needs_more_than_half_of_the_annotators():
    levels = np.array(
        [
            [1, 0, 2, 0, 1],
            [0, 0, 1, 0, 1],
            [0, 0, 2, 1, 1],
            [1, 0, 0, 1, 0],
        ]
    )
    counts = level_counts(levels)

    # word 0: 2 of 4 (a tie: not emphasized); word 2: 3 of 4; word 4: 3 of 4; word 3: 2 of 4
    assert binary_labels(counts).tolist() == [False, False, True, False, True]


def test_binary_label_counts_only_the_annotators_who_labelled_the_word():
    levels = np.array([[1, 1], [1, -1], [0, -1]])

    assert binary_labels(level_counts(levels)).tolist() == [True, True]  # 2 of 3; 1 of 1


def test_scalar_label_is_the_mean_of_0_half_and_1():
    levels = np.array([[0, 2, 1], [1, 2, -1], [2, 2, -1], [0, 1, -1]])

    assert scalar_labels(level_counts(levels)).tolist() == [(0 + 0.5 + 1 + 0) / 4, (1 + 1 + 1 + 0.5) / 4, 0.5]


def test_scalar_label_of_a_word_nobody_labelled_is_nan():
    assert np.isnan(scalar_labels(np.array([[0, 0, 0]]))[0])


def test_levels_outside_0_to_2_are_refused():
    with pytest.raises(ValueError, match="0, 1 or 2"):
        level_counts(np.array([[3, 0]]))


def _ten_clips(extra=()):
    clips, annotators = [], []
    for c in range(10):
        for a in range(12 if c % 3 else 7):  # clips 0, 3, 6, 9 have only 7 annotations
            clips.append(f"clip-{c}")
            annotators.append(f"ann-{a:02d}")
    for clip, annotator in extra:
        clips.append(clip)
        annotators.append(annotator)
    return clips, annotators


def _kept(clips, annotators, keep):
    return {(c, a) for c, a, k in zip(clips, annotators, keep) if k}


def test_subsample_keeps_exactly_n_of_every_clip_that_has_enough_and_lists_the_others():
    clips, annotators = _ten_clips()

    chosen = subsample(clips, annotators, n=10, seed=3)

    kept = _kept(clips, annotators, chosen.keep)
    per_clip = {c: sum(1 for k, _ in kept if k == c) for c in set(clips)}
    assert per_clip == {f"clip-{c}": 0 if c % 3 == 0 else 10 for c in range(10)}
    assert chosen.short == {"clip-0": 7, "clip-3": 7, "clip-6": 7, "clip-9": 7}


def test_subsample_does_not_depend_on_row_order():
    clips, annotators = _ten_clips()
    order = np.random.default_rng(0).permutation(len(clips))

    first = subsample(clips, annotators, n=10, seed=3)
    shuffled = subsample([clips[i] for i in order], [annotators[i] for i in order], n=10, seed=3)

    assert _kept(clips, annotators, first.keep) == _kept(
        [clips[i] for i in order], [annotators[i] for i in order], shuffled.keep
    )
    assert first.short == shuffled.short


def test_subsample_of_a_clip_does_not_depend_on_other_clips():
    clips, annotators = _ten_clips()
    more_clips, more_annotators = _ten_clips(extra=[("clip-new", "ann-00"), ("clip-1", "ann-99")])

    before = set(_kept(clips, annotators, subsample(clips, annotators, n=10, seed=3).keep))
    after = _kept(more_clips, more_annotators, subsample(more_clips, more_annotators, n=10, seed=3).keep)

    untouched = {pair for pair in before if pair[0] != "clip-1"}
    assert untouched == {pair for pair in after if pair[0] not in ("clip-1", "clip-new")}


def test_the_seed_changes_the_choice_and_is_reproducible():
    clips, annotators = _ten_clips()

    assert (subsample(clips, annotators, n=10, seed=1).keep == subsample(clips, annotators, n=10, seed=1).keep).all()
    assert (subsample(clips, annotators, n=10, seed=1).keep != subsample(clips, annotators, n=10, seed=2).keep).any()


def test_subsample_is_uniform_over_annotators():
    clips = ["c"] * 12
    annotators = [f"a{i}" for i in range(12)]
    chosen = np.zeros(12)
    for seed in range(3000):
        chosen += subsample(clips, annotators, n=4, seed=seed).keep

    # each annotator is kept with probability 4/12; 3000 draws: sd = sqrt(3000 * 1/3 * 2/3) ~ 26
    assert np.all(np.abs(chosen - 1000) < 6 * 26)


def test_subsample_none_keeps_everything_and_duplicates_are_refused():
    clips, annotators = _ten_clips()
    assert subsample(clips, annotators, n=None, seed=0).keep.all()
    with pytest.raises(ValueError, match="twice"):
        subsample(["c", "c"], ["a", "a"], n=1, seed=0)
    with pytest.raises(ValueError, match="at least 1"):
        subsample(clips, annotators, n=0, seed=0)


def test_majority_vote_tie_policies():
    counts = np.array(
        [
            [3, 1, 0],  # clear winner 0
            [2, 2, 1],  # tie between 0 and 1
            [0, 0, 0],  # no votes
            [1, 4, 4],  # tie between 1 and 2
        ]
    )

    assert majority_vote(counts, tie="none").tolist() == [0, -1, -1, -1]
    assert majority_vote(counts, tie="lowest").tolist() == [0, 0, -1, 1]
    drawn = majority_vote(counts, tie="random", seed=5)
    assert drawn[0] == 0 and drawn[1] in (0, 1) and drawn[2] == -1 and drawn[3] in (1, 2)
    assert (majority_vote(counts, tie="random", seed=5) == drawn).all()


def test_random_ties_pick_every_tied_category():
    counts = np.tile([2, 2, 0], (400, 1))

    picked = majority_vote(counts, tie="random", seed=1)

    assert set(picked.tolist()) == {0, 1}
    assert 150 < (picked == 0).sum() < 250


def test_majority_vote_refuses_an_unknown_policy_and_random_without_seed():
    with pytest.raises(ValueError, match="tie must be"):
        majority_vote(np.array([[1, 1]]), tie="first")
    with pytest.raises(ValueError, match="seed"):
        majority_vote(np.array([[1, 1]]), tie="random")


@pytest.mark.parametrize("seed", range(10))
def test_binary_label_is_the_majority_vote_with_ties_not_emphasized(seed):
    rng = np.random.default_rng(seed)
    levels = rng.choice([-1, 0, 1, 2], size=(int(rng.integers(1, 12)), 30), p=[0.1, 0.6, 0.2, 0.1])
    counts = level_counts(levels)
    labelled = counts.sum(axis=1) > 0

    voted = majority_vote(binary_counts(counts)[labelled], tie="lowest")

    assert (voted == binary_labels(counts)[labelled]).all()


@pytest.mark.parametrize("seed", [0, 7, 2**32 - 1])
def test_keyed_priorities_are_keyed_blake2b_of_the_joined_parts(seed):
    rows = [("clip-000001", "annotator-7"), ("x" * 300, "a long key spans several BLAKE2b blocks"), ("", "")]

    fast = keyed_priorities(seed, rows)

    for parts, value in zip(rows, fast):
        digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8, key=str(seed).encode()).digest()
        assert value == keyed_priority(seed, *parts) == int.from_bytes(digest, "big")
