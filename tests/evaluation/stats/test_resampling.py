"""The clip bootstrap's sums, draws and intervals. No database."""

import numpy as np
import pytest

from evaluation.stats.resampling import bootstrap_sums, cluster_codes, cluster_sums, generator, percentile_interval


def test_sums_are_the_per_clip_statistics_of_the_drawn_clips():
    per_clip = np.arange(30, dtype=float).reshape(10, 3) ** 2

    sums = bootstrap_sums(per_clip, resamples=7, seed=2)

    drawn = generator(seed=2).integers(0, 10, size=(7, 10), dtype=np.uint32)
    assert np.array_equal(sums, np.stack([per_clip[row].sum(axis=0) for row in drawn]))


def test_the_draws_depend_on_the_seed_and_the_number_of_clips_only():
    per_clip = np.random.default_rng(0).integers(0, 1000, size=(50, 4))

    first = bootstrap_sums(per_clip, resamples=30, seed=1)

    assert first.tobytes() == bootstrap_sums(per_clip, resamples=30, seed=1).tobytes()
    assert not np.array_equal(first, bootstrap_sums(per_clip, resamples=30, seed=2))
    # Another group's statistics over as many clips are resampled with the same draws.
    other = np.random.default_rng(1).integers(0, 1000, size=(50, 4))
    drawn = generator(seed=1).integers(0, 50, size=(30, 50), dtype=np.uint32)
    assert np.array_equal(
        bootstrap_sums(other, resamples=30, seed=1), np.stack([other[row].sum(axis=0) for row in drawn])
    )


def test_chunking_does_not_change_the_draws(monkeypatch):
    import evaluation.stats.resampling as resampling

    per_clip = np.random.default_rng(3).integers(0, 50, size=(40, 2))
    whole = bootstrap_sums(per_clip, resamples=25, seed=5)
    monkeypatch.setattr(resampling, "_BINS_PER_CHUNK", 40 * 3)  # 3 resamples a chunk

    assert np.array_equal(bootstrap_sums(per_clip, resamples=25, seed=5), whole)


def test_every_clip_is_drawn_uniformly():
    per_clip = np.eye(5)

    sums = bootstrap_sums(per_clip, resamples=4000, seed=0)

    assert np.all(sums.sum(axis=1) == 5)
    assert np.allclose(sums.mean(axis=0), 1.0, atol=0.05)


def test_no_clips_or_no_resamples():
    assert bootstrap_sums(np.zeros((0, 3)), resamples=5, seed=0).shape == (5, 3)
    assert bootstrap_sums(np.ones((4, 3)), resamples=0, seed=0).shape == (0, 3)
    with pytest.raises(ValueError, match="seed"):
        generator(seed=-1)


def test_percentile_interval_leaves_out_undefined_resamples():
    values = np.concatenate([np.arange(101, dtype=float), [np.nan, np.nan]])

    interval = percentile_interval(values)

    assert (interval.low, interval.high) == pytest.approx((2.5, 97.5), abs=1e-12)
    assert (interval.resamples, interval.undefined) == (103, 2)
    assert interval.se == pytest.approx(np.std(np.arange(101), ddof=1))


def test_percentile_interval_of_too_few_defined_values_is_undefined():
    interval = percentile_interval(np.array([np.nan, 0.3]))

    assert (interval.low, interval.high, interval.se) == (None, None, None)


def test_cluster_codes_and_sums():
    codes, n = cluster_codes(np.array([30, 10, 30, 20]))

    assert (codes.tolist(), n) == ([2, 0, 2, 1], 3)
    assert cluster_sums(np.array([1.0, 2.0, 3.0, 4.0]), codes, n).tolist() == [2.0, 4.0, 4.0]
