"""Leave-one-out kappa, checked by hand and against scikit-learn. No database."""

import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evaluation.stats.annotator_quality import (
    binary_kappa,
    leave_one_out_kappa,
    leave_one_out_kappas,
    majority_of,
)

# Two clips of five words. On clip 1 A's others are B, C, D; on clip 2 only B and C.
CLIPS = [
    {"A": [2, 0, 0, 1, 0], "B": [1, 0, 0, 0, 0], "C": [1, 1, 0, 0, 0], "D": [0, 0, 0, 1, 0]},
    {"A": [0, 1, 0, 0, 0], "B": [0, 1, 0, 0, 0], "C": [0, 2, 0, 0, 1]},
]


def test_majority_needs_more_than_half_of_the_rows():
    assert majority_of(np.array([[1, 0, 2], [0, 0, 1]])).tolist() == [False, False, True]  # 1 of 2 is a tie
    assert majority_of(np.array([[1], [2], [0]])).tolist() == [True]  # 2 of 3
    assert majority_of(np.array([[1], [0], [0], [2]])).tolist() == [False]  # 2 of 4 is a tie


def test_hand_worked_example():
    # Reference (others' majority), pooled:   1 0 0 0 0 | 0 1 0 0 0   (clip 2, word 5: 1 of 2 -> not emphasized)
    # A, binary:                              1 0 0 1 0 | 0 1 0 0 0
    # n = 10, agree = 9, A marks 3, reference 2: p_o = 0.9, p_e = 0.3*0.2 + 0.7*0.8 = 0.62
    # kappa = (0.9 - 0.62) / (1 - 0.62) = 14/19
    result = leave_one_out_kappa("A", CLIPS, min_words=10)

    assert result.kappa == pytest.approx(14 / 19, abs=1e-12)
    assert (result.clips, result.words, result.reason) == (2, 10, "")


def test_a_tie_among_the_others_counts_as_not_emphasized():
    clips = [{"A": [1, 0, 0, 1], "B": [1, 0, 0, 1], "C": [0, 0, 0, 1]}]
    # Reference: word 1 is 1 of 2 -> 0; word 4 is 2 of 2 -> 1.  A: 1 0 0 1.
    # agree 3 of 4, A marks 2, reference 1: p_o = .75, p_e = .5*.25 + .5*.75 = .5, kappa = .5
    assert leave_one_out_kappa("A", clips, min_words=4).kappa == pytest.approx(0.5)


def test_clips_with_too_few_others_are_left_out():
    result = leave_one_out_kappa("D", CLIPS, min_words=1)
    assert (result.clips, result.words) == (1, 5)

    lonely = leave_one_out_kappa("A", [{"A": [1, 0], "B": [1, 0]}], min_words=1)
    assert lonely.kappa is None
    assert lonely.reason == "no clip shared with at least 2 other annotators"
    assert leave_one_out_kappa("A", [{"A": [1, 0], "B": [1, 0]}], min_others=1, min_words=1).kappa == 1.0


def test_too_few_words_is_undefined_not_an_error():
    result = leave_one_out_kappa("A", CLIPS)  # 10 words, default minimum 20

    assert result.kappa is None
    assert result.reason == "only 10 words on clips shared with at least 2 others (need 20)"


def test_no_variance_is_undefined_rather_than_perfect():
    clips = [{"A": [0, 0, 0, 0], "B": [1, 0, 0, 0], "C": [0, 0, 0, 0]}]  # everyone's reference is all 0

    result = leave_one_out_kappa("A", clips, min_words=1)

    assert result.kappa is None
    assert result.reason.startswith("no variance")
    # Both constant but different is defined: no agreement beyond chance.
    assert leave_one_out_kappa("A", [{"A": [1, 1], "B": [0, 0], "C": [0, 0]}], min_words=1).kappa == 0.0


def test_an_annotator_absent_from_every_clip_has_no_kappa():
    assert leave_one_out_kappa("Z", CLIPS, min_words=1).kappa is None


def test_clips_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="different numbers of words"):
        leave_one_out_kappa("A", [{"A": [1, 0], "B": [1, 0, 0], "C": [0, 0]}], min_words=1)


def test_kappas_for_everyone_match_one_at_a_time():
    everyone = leave_one_out_kappas(CLIPS, min_words=5)

    assert set(everyone) == {"A", "B", "C", "D"}
    for annotator, result in everyone.items():
        assert result == leave_one_out_kappa(annotator, CLIPS, min_words=5)


@pytest.mark.parametrize("seed", range(40))
def test_binary_kappa_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    a, b = rng.random(n) < rng.random(), rng.random(n) < rng.random()

    ours = binary_kappa(a, b)

    if len(set(a.tolist()) | set(b.tolist())) == 1:
        assert ours is None  # sklearn answers nan (0/0) here
    else:
        assert ours == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)


@pytest.mark.parametrize("seed", range(25))
def test_leave_one_out_kappa_matches_sklearn_on_random_studies(seed):
    rng = np.random.default_rng(1000 + seed)
    annotators = [f"p{i}" for i in range(8)]
    clips = []
    for _ in range(30):
        words = int(rng.integers(3, 12))
        chosen = rng.choice(annotators, size=int(rng.integers(1, 7)), replace=False)
        rate = rng.random() * 0.5
        clips.append({str(a): rng.choice([0, 1, 2], size=words, p=[1 - rate, rate * 0.7, rate * 0.3]) for a in chosen})

    for annotator in annotators:
        ours = leave_one_out_kappa(annotator, clips, min_words=1)
        labels, reference = _pooled_by_loops(annotator, clips)
        if not labels:
            assert ours.kappa is None
            continue
        assert ours.words == len(labels)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = cohen_kappa_score(labels, reference)
        if np.isnan(expected):
            assert ours.kappa is None
        else:
            assert ours.kappa == pytest.approx(expected, abs=1e-9)


def _pooled_by_loops(annotator, clips, min_others=2):
    """An independent, plain-Python restatement of the pooling rule."""
    labels, reference = [], []
    for clip in clips:
        others = [levels for name, levels in clip.items() if name != annotator]
        if annotator not in clip or len(others) < min_others:
            continue
        for index, level in enumerate(clip[annotator]):
            marked = sum(1 for levels in others if levels[index] >= 1)
            labels.append(int(level >= 1))
            reference.append(int(marked > len(others) / 2))
    return labels, reference


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="same length"):
        binary_kappa(np.array([True, False]), np.array([True]))
    with pytest.raises(ValueError, match="min_others"):
        leave_one_out_kappa("A", CLIPS, min_others=0)
