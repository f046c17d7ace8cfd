"""Average pairwise Cohen's kappa, by hand and against scikit-learn. No database."""

import itertools
import math
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evaluation.stats.cohen import average_pairwise_kappa, clip_pair_tables, pair_kappas
from evaluation.stats.ratings import Ratings


def ratings(rows, words):
    """rows: (clip, annotator, levels); words: words per clip."""
    width = max(words)
    levels = np.full((len(rows), width), -1)
    for i, (_, _, values) in enumerate(rows):
        levels[i, : len(values)] = values
    return Ratings.build(clip=[r[0] for r in rows], annotator=[r[1] for r in rows], levels=levels, clip_words=words)


def test_hand_worked_example():
    # Annotators 0, 1 share clips 0 and 1 (8 words); 0, 2 and 1, 2 share clip 1 only (4 words).
    data = ratings(
        [
            (0, 0, [1, 0, 0, 1]),
            (0, 1, [1, 0, 0, 0]),
            (1, 0, [0, 1, 0, 0]),
            (1, 1, [0, 2, 0, 0]),
            (1, 2, [0, 1, 1, 0]),
        ],
        [4, 4],
    )

    result = average_pairwise_kappa(clip_pair_tables(data))

    # (0,1): 8 words, 0 marks 3, 1 marks 2, agree 7: p_o = 7/8, p_e = (3*2 + 5*6)/64 = 36/64, kappa = 5/7
    # (0,2): 4 words, 0 marks 1, 2 marks 2, agree 3: p_o = 3/4, p_e = (1*2 + 3*2)/16 = 1/2, kappa = 1/2
    # (1,2): the same as (0,2) on clip 1: kappa = 1/2
    assert result.value == pytest.approx((5 / 7 + 0.5 + 0.5) / 3, abs=1e-12)
    assert result.mean_weighted_by_words == pytest.approx((8 * 5 / 7 + 4 * 0.5 + 4 * 0.5) / 16, abs=1e-12)
    assert (result.pairs, result.pairs_undefined, result.reason) == (3, 0, "")


def test_a_pair_with_no_variance_is_undefined_and_left_out_of_the_mean():
    data = ratings([(0, 0, [0, 0, 0]), (0, 1, [0, 0, 0]), (0, 2, [1, 0, 0])], [3])

    result = average_pairwise_kappa(clip_pair_tables(data))

    # (0,1) both all zero: 0/0; (0,2) and (1,2): p_o = 2/3, p_e = 2/3 -> kappa 0
    assert (result.pairs, result.pairs_undefined, result.value) == (3, 1, 0.0)


def test_every_pair_undefined_is_reported_not_one():
    data = ratings([(0, 0, [1, 1]), (0, 1, [2, 1])], [2])

    result = average_pairwise_kappa(clip_pair_tables(data))

    assert result.value is None
    assert "undefined for all 1 annotator pairs" in result.reason


def test_nobody_sharing_a_word_is_undefined():
    data = ratings([(0, 0, [1, 0]), (1, 1, [0, 1])], [2, 2])

    result = average_pairwise_kappa(clip_pair_tables(data))

    assert (result.value, result.pairs) == (None, 0)
    assert result.reason == "no two annotators labelled a common word"


def test_pairs_are_counted_only_on_the_words_both_labelled():
    data = ratings([(0, 0, [1, 0, -1, 1]), (0, 1, [1, -1, 0, 0])], [4])

    a, b, shared, kappa = pair_kappas(clip_pair_tables(data))

    assert (a.tolist(), b.tolist(), shared.tolist()) == ([0], [1], [2])  # words 0 and 3
    assert kappa[0] == pytest.approx(cohen_kappa_score([1, 1], [1, 0]), abs=1e-12)


def test_a_clip_mask_restricts_the_pairs_to_those_clips():
    data = ratings([(0, 0, [1, 0]), (0, 1, [1, 0]), (1, 0, [0, 1]), (1, 1, [1, 0])], [2, 2])
    tables = clip_pair_tables(data)

    only_first = average_pairwise_kappa(tables, np.array([True, False]))

    assert only_first.value == 1.0


def random_ratings(seed: int) -> Ratings:
    rng = np.random.default_rng(seed)
    clips, annotators = int(rng.integers(3, 25)), int(rng.integers(2, 9))
    words = rng.integers(1, 9, size=clips)
    rows = []
    for clip in range(clips):
        chosen = rng.choice(annotators, size=int(rng.integers(1, annotators + 1)), replace=False)
        rate = rng.random() * 0.6
        for annotator in chosen:
            values = rng.choice([0, 1, 2], size=words[clip], p=[1 - rate, rate * 0.7, rate * 0.3])
            values[rng.random(words[clip]) < 0.15] = -1  # missing levels
            rows.append((clip, int(annotator), values.tolist()))
    return ratings(rows, words.tolist())


def sklearn_mean(data: Ratings, weighting=None):
    """Every pair of annotators, each on the words both labelled, by plain loops and scikit-learn;
    weighting None: the binary collapse, else the three levels with scikit-learn's weights."""
    labels = {}
    offsets = np.concatenate([[0], np.cumsum(data.clip_words)])
    for clip, annotator, levels in zip(data.clip, data.annotator, data.levels):
        for word in range(data.clip_words[clip]):
            if levels[word] >= 0:
                label = int(levels[word] >= 1) if weighting is None else int(levels[word])
                labels.setdefault(annotator, {})[offsets[clip] + word] = label
    kappas = []
    for a, b in itertools.combinations(sorted(labels), 2):
        shared = sorted(set(labels[a]) & set(labels[b]))
        if not shared:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sklearn warns, then answers NaN, when kappa is 0/0
            options = {} if weighting is None else {"labels": [0, 1, 2], "weights": SKLEARN[weighting]}
            kappas.append(cohen_kappa_score([labels[a][u] for u in shared], [labels[b][u] for u in shared], **options))
    return kappas


SKLEARN = {"unweighted": None, "linear": "linear", "quadratic": "quadratic"}


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("weighting", ["unweighted", "linear", "quadratic"])
def test_three_level_kappas_match_scikit_learn_with_weights(seed, weighting):
    data = random_ratings(300 + seed)

    result = average_pairwise_kappa(clip_pair_tables(data), weighting=weighting)

    expected = sklearn_mean(data, weighting)
    defined = [k for k in expected if not math.isnan(k)]
    assert (result.pairs, result.pairs_undefined) == (len(expected), len(expected) - len(defined))
    if defined:
        assert result.value == pytest.approx(float(np.mean(defined)), abs=1e-9)
    else:
        assert result.value is None


@pytest.mark.parametrize("seed", range(40))
def test_matches_scikit_learn_on_random_data_with_missing_levels(seed):
    data = random_ratings(seed)

    result = average_pairwise_kappa(clip_pair_tables(data))

    expected = sklearn_mean(data)
    defined = [k for k in expected if not math.isnan(k)]
    assert result.pairs == len(expected)
    assert result.pairs_undefined == len(expected) - len(defined)
    if defined:
        assert result.value == pytest.approx(float(np.mean(defined)), abs=1e-9)
    else:
        assert result.value is None


def test_two_raters_of_a_matrix_give_scikit_learns_kappa():
    nan = np.nan
    matrix = [[0, 1, 2, 0, 0, 1, nan, 0], [0, 2, 0, 0, 1, 1, 1, nan]]  # levels 1 and 2 both "emphasized"

    result = average_pairwise_kappa(clip_pair_tables(Ratings.from_matrix(matrix)))

    assert result.value == pytest.approx(cohen_kappa_score([0, 1, 1, 0, 0, 1], [0, 1, 0, 0, 1, 1]), abs=1e-12)
