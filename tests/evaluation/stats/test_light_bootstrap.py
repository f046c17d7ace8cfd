"""The clip bootstrap of Light's kappa from per-clip statistics equals Light's kappa computed on
each resampled data set built clip by clip (a clip drawn k times copied k times). No database."""

import numpy as np
import pytest

from evaluation.stats.cohen import average_pairwise_kappa, clip_pair_tables
from evaluation.stats.light_bootstrap import clip_pair_statistics, light_kappa_of_counts, light_kappa_resampled
from evaluation.stats.ratings import Ratings
from evaluation.stats.resampling import resample_counts


def crowd(*, clips: int, annotators: int, per_clip: int, words: int, seed: int, mark_rate=0.2) -> Ratings:
    """Random annotators on random clips: some pairs share one clip, some several."""
    rng = np.random.default_rng(seed)
    rows = []
    for clip in range(clips):
        for annotator in rng.choice(annotators, size=per_clip, replace=False):
            rows.append(
                (clip, int(annotator), rng.choice(3, size=words, p=[1 - mark_rate, mark_rate / 2, mark_rate / 2]))
            )
    levels = np.stack([r[2] for r in rows])
    return Ratings.build(
        clip=[r[0] for r in rows],
        annotator=[r[1] for r in rows],
        levels=levels,
        clip_words=np.full(clips, words),
        n_annotators=annotators,
    )


def resampled_directly(ratings: Ratings, clip_labels: np.ndarray, *, resamples: int, seed: int) -> np.ndarray:
    """Light's kappa of every resampled data set, built as the bootstrap means it."""
    values = []
    for _, counts in resample_counts(clips=clip_labels.size, resamples=resamples, seed=seed):
        for row in counts:
            clip, annotator, levels = [], [], []
            new_clip = 0
            for code, times in enumerate(row):
                members = np.flatnonzero(ratings.clip == clip_labels[code])
                for _ in range(times):
                    clip += [new_clip] * members.size
                    annotator += ratings.annotator[members].tolist()
                    levels.append(ratings.levels[members])
                    new_clip += 1
            data = Ratings.build(
                clip=clip,
                annotator=annotator,
                levels=np.concatenate(levels),
                clip_words=np.full(new_clip, ratings.levels.shape[1]),
                n_annotators=ratings.n_annotators,
            )
            result = average_pairwise_kappa(clip_pair_tables(data))
            values.append(np.nan if result.value is None else result.value)
    return np.array(values)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bootstrap_equals_light_kappa_on_each_resampled_data_set(seed):
    ratings = crowd(clips=12, annotators=9, per_clip=4, words=5, seed=seed)
    labels = np.arange(12)

    fast = light_kappa_resampled(clip_pair_statistics(clip_pair_tables(ratings), labels), resamples=40, seed=seed)

    np.testing.assert_allclose(fast, resampled_directly(ratings, labels, resamples=40, seed=seed), rtol=1e-12)


def test_a_group_of_clips_resamples_only_its_own_clips():
    ratings = crowd(clips=10, annotators=6, per_clip=3, words=4, seed=5)
    group = np.array([1, 4, 5, 8])

    fast = light_kappa_resampled(clip_pair_statistics(clip_pair_tables(ratings), group), resamples=30, seed=3)

    np.testing.assert_allclose(fast, resampled_directly(ratings, group, resamples=30, seed=3), rtol=1e-12)


def test_pairs_sharing_one_clip_and_pairs_sharing_several_both_count():
    # Annotators 0 and 1 share both clips; 2 is on clip 1 only.
    levels = np.array([[1, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0], [0, 2, 0, 0], [0, 1, 1, 0]])
    ratings = Ratings.build(clip=[0, 0, 1, 1, 1], annotator=[0, 1, 0, 1, 2], levels=levels, clip_words=[4, 4])
    statistics = clip_pair_statistics(clip_pair_tables(ratings), np.array([0, 1]))

    assert statistics.two.first_clip.tolist() == [0]  # the pair (0, 1)
    assert statistics.single_count.tolist() == [0, 2]  # (0, 2) and (1, 2) on clip 1
    np.testing.assert_allclose(
        light_kappa_resampled(statistics, resamples=25, seed=9),
        resampled_directly(ratings, np.array([0, 1]), resamples=25, seed=9),
        rtol=1e-12,
    )


def test_a_resample_without_a_defined_pair_is_nan():
    # Everybody agrees on "nothing emphasized" in clip 0: only clip 1 has a defined pair.
    levels = np.array([[0, 0], [0, 0], [1, 0], [1, 1]])
    ratings = Ratings.build(clip=[0, 0, 1, 1], annotator=[0, 1, 2, 3], levels=levels, clip_words=[2, 2])
    values = light_kappa_resampled(
        clip_pair_statistics(clip_pair_tables(ratings), np.array([0, 1])), resamples=50, seed=0
    )
    direct = resampled_directly(ratings, np.array([0, 1]), resamples=50, seed=0)

    assert np.isnan(values).any() and not np.isnan(values).all()
    np.testing.assert_array_equal(np.isnan(values), np.isnan(direct))


def test_pairs_sharing_three_clips_or_more():
    ratings = crowd(clips=6, annotators=4, per_clip=4, words=5, seed=11)  # every pair shares every clip
    statistics = clip_pair_statistics(clip_pair_tables(ratings), np.arange(6))

    assert statistics.several[0].shape[0] == 6 and statistics.two.first_clip.size == 0
    np.testing.assert_allclose(
        light_kappa_resampled(statistics, resamples=30, seed=2),
        resampled_directly(ratings, np.arange(6), resamples=30, seed=2),
        rtol=1e-12,
    )


def test_all_clips_drawn_once_is_the_point_estimate():
    ratings = crowd(clips=15, annotators=8, per_clip=4, words=6, seed=4)
    statistics = clip_pair_statistics(clip_pair_tables(ratings), np.arange(15))

    (value,) = light_kappa_of_counts(statistics, np.ones((1, 15), dtype=np.int64))

    assert value == pytest.approx(average_pairwise_kappa(clip_pair_tables(ratings)).value, abs=1e-12)
