"""The two-way jackknife of Fleiss' kappa (evaluation.stats.kappa_jackknife): its deletions against
fleiss_kappa recomputed without each clip, listener and annotation, and its error against the
spread of kappa over fresh crowds whose heavy markers the linearized error missed (issue 31)."""

import math

import numpy as np
import pytest

from evaluation.stats.crowds import crowd
from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.kappa_jackknife import two_way_jackknife_se


def kappa_of(clip, levels) -> float:
    """fleiss_kappa of the binary marks, each (clip, word) a unit rated by whoever heard it."""
    units = {}
    for row, c in enumerate(clip):
        for word, level in enumerate(levels[row]):
            if level >= 0:
                units.setdefault((c, word), [0, 0])[int(level >= 1)] += 1
    return fleiss_kappa(np.array(list(units.values()))).value


def brute_force_se(clip, annotator, levels) -> float:
    """Each deletion's kappa recomputed from scratch: clips, listeners, annotations."""

    def variance(groups):
        deleted = []
        for group in np.unique(groups):
            kept = groups != group
            deleted.append(kappa_of(clip[kept], levels[kept]))
        deleted = np.array(deleted)
        return (deleted.size - 1) / deleted.size * np.sum((deleted - deleted.mean()) ** 2)

    by_clip, by_listener, by_annotation = variance(clip), variance(annotator), variance(np.arange(clip.size))
    return math.sqrt(max(by_clip, by_clip + by_listener - by_annotation))


def small_study(seed: int):
    """14 clips, 3 to 5 listeners each from a pool of 9, 4 words, some words left out."""
    rng = np.random.default_rng(seed)
    clip, annotator = [], []
    for c in range(14):
        people = rng.choice(9, size=rng.integers(3, 6), replace=False)
        clip += [c] * people.size
        annotator += people.tolist()
    clip, annotator = np.array(clip), np.array(annotator)
    truth = rng.random((14, 4)) < 0.4
    levels = np.where(rng.random((clip.size, 4)) < 0.8, truth[clip], ~truth[clip]).astype(np.int64)
    levels[rng.random(levels.shape) < 0.2] += 1  # some level-2 marks on the marked words
    levels = np.where(levels >= 1, np.minimum(levels, 2), 0)
    levels[rng.random(levels.shape) < 0.08] = -1
    return clip, annotator, levels


@pytest.mark.parametrize("seed", range(4))
def test_every_deletion_is_fleiss_kappa_recomputed_without_it(seed):
    clip, annotator, levels = small_study(seed)
    assert two_way_jackknife_se(clip, annotator, levels) == pytest.approx(
        brute_force_se(clip, annotator, levels), rel=1e-10
    )


def test_listeners_of_one_annotation_each_leave_the_clips_jackknife():
    clip, _, levels = small_study(7)
    alone = two_way_jackknife_se(clip, np.arange(clip.size), levels)
    deleted = np.array([kappa_of(clip[clip != c], levels[clip != c]) for c in np.unique(clip)])
    clips = deleted.size
    assert alone == pytest.approx(math.sqrt((clips - 1) / clips * np.sum((deleted - deleted.mean()) ** 2)), rel=1e-10)


def test_no_error_where_kappa_or_a_deletion_is_undefined():
    clip = np.repeat(np.arange(3), 2)
    assert two_way_jackknife_se(clip, np.arange(6), np.ones((6, 2), dtype=np.int64)) is None  # one category
    assert two_way_jackknife_se(np.zeros(3, dtype=np.int64), np.arange(3), np.eye(3, dtype=np.int64)) is None
    assert two_way_jackknife_se(clip, np.zeros(6, dtype=np.int64), np.eye(6, 2, dtype=np.int64)) is None


def test_its_error_is_the_spread_of_kappa_over_fresh_crowds_with_heavy_markers():
    """20 % of listeners mark every word heavily, five a clip, tasks of 20 clips: which heavy
    markers a study draws is most of kappa's error. The first-order linearization clustered by
    clip and listener gave about 0.68 of the spread; the jackknife keeps the interactions."""
    kappas, errors = [], []
    for seed in range(60):
        made = crowd("20 % heavy", clips=200, listeners=5, seed=800 + seed)
        clip, annotator, levels = made.annotations(5)
        marks = (levels >= 1).reshape(200, 5, -1).sum(axis=1).ravel()
        kappas.append(fleiss_kappa(np.stack([5 - marks, marks], axis=1)).value)
        errors.append(two_way_jackknife_se(clip, annotator, levels))
    spread = float(np.std(kappas, ddof=1))
    spread_se = spread / math.sqrt(2 * (len(kappas) - 1))  # about 9 %: 0.68 of it would fail
    assert abs(float(np.mean(errors)) - spread) <= 0.1 * spread + 1.5 * spread_se
