"""The ordinal model's predictive of future marks (evaluation.stats.ordinal_predictive)."""

import numpy as np
from scipy.stats import binom

from evaluation.stats.annotator_models import GRID
from evaluation.stats.ordinal_predictive import OrdinalPredictive, ordinal_state_fit, prominence_posterior
from evaluation.stats.simulated_truth import simulated_truth_study
from evaluation.stats.stopping import flip_probabilities


def test_a_word_sure_of_its_prominence_gets_the_binomial_of_the_crowds_chance_there():
    posterior = np.zeros((2, GRID.size))
    posterior[0, 3], posterior[1, 17] = 1.0, 1.0
    chance = np.linspace(0.01, 0.99, GRID.size)
    pmf = OrdinalPredictive(posterior, chance).future_marks(np.zeros(2), np.full(2, 3), 7)
    assert np.allclose(pmf[0], binom.pmf(np.arange(8), 7, chance[3]))
    assert np.allclose(pmf[1], binom.pmf(np.arange(8), 7, chance[17]))


def fitted_on_simulation():
    study = simulated_truth_study(clips=200, per_clip=6, words=10, seed=1).data
    state = ordinal_state_fit(
        clip=study.clip, annotator=study.annotator, levels=study.levels, n_annotators=len(study.annotator_keys)
    )
    return study, state


def test_heavy_marks_predict_more_marks_than_light_ones_and_none_fewest():
    _, state = fitted_on_simulation()
    typical = np.tile(np.median(state.parameters, axis=0), (5, 1))
    rows = {"heavy": [2] * 5, "light": [1] * 3 + [0] * 2, "none": [0] * 5}
    expected = {}
    for name, levels in rows.items():
        posterior = prominence_posterior(
            state, row_word=np.zeros(5, dtype=int), row_parameters=typical, row_level=levels, words=1
        )
        pmf = OrdinalPredictive(posterior, state.mark_chance).future_marks(np.zeros(1), np.full(1, 5), 5)
        assert np.isclose(pmf.sum(), 1.0)
        expected[name] = float(pmf[0] @ np.arange(6))
    assert expected["heavy"] > expected["light"] > expected["none"]


def test_its_flip_probabilities_are_calibrated_on_a_simulated_study():
    # Predicted from each word's first 3 annotations, against what its 6 annotations gave.
    study, _ = fitted_on_simulation()
    first = np.concatenate([np.flatnonzero(study.clip == c)[:3] for c in np.unique(study.clip)])
    words = study.levels.shape[1]
    state = ordinal_state_fit(
        clip=study.clip[first],
        annotator=study.annotator[first],
        levels=study.levels[first],
        n_annotators=len(study.annotator_keys),
    )
    clip_of = np.repeat(np.arange(first.size // 3), 3)
    posterior = prominence_posterior(
        state,
        row_word=(clip_of[:, None] * words + np.arange(words)[None, :]).ravel(),
        row_parameters=state.parameters[np.repeat(study.annotator[first], words)],
        row_level=study.levels[first].ravel(),
        words=clip_of.max() * words + words,
    )
    marks3 = (study.levels[first] >= 1).reshape(-1, 3, words).sum(axis=1).ravel()
    marks6 = (study.levels >= 1).reshape(-1, 6, words).sum(axis=1).ravel()
    flips = flip_probabilities(marks3, 3, 6, OrdinalPredictive(posterior, state.mark_chance))
    flipped = (2 * marks6 > 6) != (2 * marks3 > 3)
    assert abs(flips.mean() - flipped.mean()) < 0.02, (flips.mean(), flipped.mean())
