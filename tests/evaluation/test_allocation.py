"""evaluation.stats.allocation: the ordinal model on a fine grid, its labels and its priorities."""

import numpy as np
import pytest

from evaluation.stats.allocation import (
    FINE_GRID,
    emphasis_probabilities,
    expected_error_reductions,
    fine_confusion,
    model_clip_priority,
    prominence_model_fit,
    word_log_likelihoods,
)
from evaluation.stats.annotator_models import GRID, ordinal_confusion


def simulated(clips=60, words=10, listeners=8, seed=0):
    """Ordinal annotations of words with a known prominence: each listener their own threshold."""
    rng = np.random.default_rng(seed)
    prominence = rng.normal(0.0, 1.0, (clips, words)) + 2.6 * (rng.random((clips, words)) < 0.2)
    threshold = rng.normal(1.55, 0.3, listeners)
    seen = prominence[:, None, :] + rng.normal(0.0, 0.8, (clips, listeners, words))
    levels = (seen >= threshold[None, :, None]).astype(int) + (seen >= threshold[None, :, None] + 1.2)
    clip = np.repeat(np.arange(clips), listeners)
    annotator = np.tile(np.arange(listeners), clips)
    return prominence, clip, annotator, levels.reshape(-1, words)


def fitted(clips=60, words=10, listeners=8, extra_annotators=0):
    prominence, clip, annotator, levels = simulated(clips, words, listeners)
    model = prominence_model_fit(
        clip=clip, annotator=annotator, levels=levels, n_annotators=listeners + extra_annotators
    )
    likelihood = word_log_likelihoods(
        model,
        row_word=(clip[:, None] * words + np.arange(words)[None, :]).ravel(),
        row_annotator=np.repeat(annotator, words),
        row_level=levels.ravel(),
        words=clips * words,
    )
    return prominence.ravel(), model, likelihood


def test_the_fine_confusion_is_the_ordinal_models_on_its_grid():
    parameters = np.array([[0.5, np.log(1.2), 0.0], [1.8, np.log(0.4), np.log(2.0)]])

    assert np.allclose(FINE_GRID[::20], GRID)
    assert np.allclose(fine_confusion(parameters)[:, ::20], ordinal_confusion(parameters))
    assert np.allclose(fine_confusion(parameters).sum(axis=2), 1.0)


def test_word_log_likelihoods_sum_each_words_annotations():
    _, model, _ = fitted()
    likelihood = word_log_likelihoods(
        model, row_word=[0, 0, 1], row_annotator=[2, 3, model.typical], row_level=[2, 1, 0], words=2
    )

    assert np.allclose(likelihood[0], model.log_confusion[2][:, 2] + model.log_confusion[3][:, 1])
    assert np.allclose(likelihood[1], model.log_confusion[model.typical][:, 0])


def test_labels_follow_the_prominence_and_are_calibrated_enough():
    prominence, model, likelihood = fitted()
    probability = emphasis_probabilities(model, likelihood)
    truth = prominence > 1.55

    assert probability[prominence > 3.5].min() > 0.9
    assert probability[prominence < 0.0].max() < 0.1
    assert ((probability > 0.5) != truth).mean() < 0.08
    # The expected error the posteriors claim is near the error the labels make.
    assert np.minimum(probability, 1 - probability).mean() == pytest.approx(
        ((probability > 0.5) != truth).mean(), abs=0.03
    )


def test_an_annotator_the_fit_has_not_seen_is_a_typical_listener():
    _, model, _ = fitted(extra_annotators=2)

    assert model.fitted.tolist() == [True] * 8 + [False] * 2
    assert np.allclose(model.log_confusion[8], model.log_confusion[model.typical])


def test_further_listeners_are_worth_most_on_a_contested_word():
    _, model, _ = fitted()
    typical = model.log_confusion[model.typical]
    clear = 6 * typical[:, 2]  # six heavy marks
    contested = 3 * typical[:, 0] + 3 * typical[:, 1]
    words = np.stack([np.zeros(FINE_GRID.size), clear, contested])
    one, four = expected_error_reductions(model, words), expected_error_reductions(model, words, more=4)

    assert (one >= 0).all() and (four >= 0).all()
    assert four[1] < 1e-3 < four[2]
    assert model_clip_priority(model, words, lookahead=1) == pytest.approx(one.sum())
    # Looking ahead values the contested word even where a single listener could not turn its label.
    # Where the look-ahead's best is four listeners, the two sides are one number summed in two
    # orders, equal to within rounding.
    floor = max(four[2] / 4, one[2])
    assert floor > 0
    assert model_clip_priority(model, words[2:], lookahead=4) >= floor * (1 - 1e-12)
