"""The drill-down's per-group statistics against the reference libraries, group by group."""

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from evaluation.stats.cohen import clip_pair_tables
from evaluation.stats.drilldown import (
    group_agreement,
    lowest_first,
    top_pair_confusions,
    unit_positions,
    word_key,
)
from evaluation.stats.ratings import binary_counts
from evaluation.stats.simulation import simulated_study


@pytest.fixture(scope="module")
def study():
    return simulated_study(clips=60, per_clip=6, words=7, seed=3, extra_share=0.3)


def test_per_clip_fleiss_and_alpha_match_statsmodels_and_krippendorff(study):
    counts, unit_clip = study.ratings().unit_counts()
    per_clip = group_agreement(counts, unit_clip, len(study.clip_keys))
    checked = 0
    for clip in range(len(study.clip_keys)):
        mine = counts[unit_clip == clip]
        expected_alpha = krippendorff.alpha(value_counts=mine, level_of_measurement="ordinal", value_domain=[0, 1, 2])
        assert per_clip.alpha[clip] == pytest.approx(expected_alpha, abs=1e-12)
        binary = binary_counts(mine)
        if (binary.sum(axis=0) > 0).sum() == 2:
            assert per_clip.kappa[clip] == pytest.approx(statsmodels_fleiss(binary), abs=1e-12)
            checked += 1
        else:
            assert np.isnan(per_clip.kappa[clip]) and per_clip.observed[clip] == 1.0
    assert checked > 50  # the comparison ran on most clips


def test_kappa_undefined_gives_observed_agreement_and_contested_words_are_counted():
    # clip 0: nobody marks anything (kappa 0/0, observed 1); clip 1: 2 of 4 mark word 0, 1 of 4 word 1
    counts = np.array([[3, 0, 0], [3, 0, 0], [2, 1, 1], [3, 1, 0], [4, 0, 0]])
    result = group_agreement(counts, np.array([0, 0, 1, 1, 1]), 2)
    assert np.isnan(result.kappa[0]) and result.observed[0] == 1.0 and result.agreement[0] == 1.0
    assert result.contested.tolist() == [0.0, pytest.approx(1 / 3)]  # 2/4 = 50 % contested, 1/4 not
    assert result.marked_share[1] == pytest.approx(3 / 12)
    assert result.kappa[1] == pytest.approx(statsmodels_fleiss(binary_counts(counts[2:])))


def test_lowest_first_puts_undefined_last_and_breaks_ties_by_alpha_then_key():
    agreement = np.array([0.5, np.nan, 0.1, 0.5, 0.5])
    alpha = np.array([0.3, 0.0, 0.9, 0.2, 0.3])
    order = lowest_first(agreement, alpha, ["e", "a", "c", "d", "b"])
    assert order.tolist() == [2, 3, 4, 0, 1]


def test_positions_and_word_keys():
    assert unit_positions(np.array([3, 1, 2])).tolist() == [0, 1, 2, 0, 0, 1]
    assert [word_key(text) for text in ["Hello,", "«Hola»", "WORLD", "..."]] == ["hello", "hola", "world", "..."]


def test_top_pairs_are_those_sharing_most_clips_with_their_level_confusion(study):
    tables = clip_pair_tables(study.ratings())
    top = top_pair_confusions(tables, pairs=5)
    # The reference: every annotator pair's shared clips and summed 3 x 3 table, by brute force.
    ratings = study.ratings()
    shared: dict[tuple[int, int], list] = {}
    for clip in np.unique(ratings.clip):
        rows = np.flatnonzero(ratings.clip == clip)
        for i in rows:
            for j in rows:
                if ratings.annotator[i] < ratings.annotator[j]:
                    table = np.zeros((3, 3), dtype=np.int64)
                    both = (ratings.levels[i] >= 0) & (ratings.levels[j] >= 0)
                    np.add.at(table, (ratings.levels[i][both], ratings.levels[j][both]), 1)
                    entry = shared.setdefault((ratings.annotator[i], ratings.annotator[j]), [0, 0])
                    entry[0] += 1
                    entry[1] = entry[1] + table
    most = max(entry[0] for entry in shared.values())
    assert top.clips[0] == most and list(top.clips) == sorted(top.clips, reverse=True)
    for a, b, clips, joint in zip(top.a, top.b, top.clips, top.joint):
        assert clips == shared[(a, b)][0]
        assert np.array_equal(joint, shared[(a, b)][1])


def test_study_data_keeps_word_texts_by_their_keys_and_refuses_codes_of_another_shape():
    from evaluation.stats.study_data import StudyData

    data = StudyData.build(
        study="s",
        clips={
            "c1": {"words": 2, "texts": ["Hello,", "world"]},
            "c2": {"words": 3, "texts": ["hello", "big", "World!"]},
        },
        annotations=[("c1", "a", [0, 1], False, 1.0), ("c2", "a", [1, 0, 0], False, 1.0)],
    )
    assert data.vocabulary == ("big", "hello", "world")
    assert data.word_codes.tolist() == [[1, 2, -1], [1, 0, 2]]
    with pytest.raises(ValueError, match="word_codes"):
        StudyData.from_arrays(**{**vars(data), "word_codes": data.word_codes[:, :2]})
