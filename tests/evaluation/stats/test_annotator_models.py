"""The annotator models on simulated studies with a known truth (evaluation.stats.simulated_truth)."""

import re

import numpy as np
import pytest
from scipy.stats import spearmanr

from evaluation.stats.aggregation import binary_labels, level_counts
from evaluation.stats.annotator_models import majority_labels, word_posteriors
from evaluation.stats.simulated_truth import simulated_truth_study


@pytest.fixture(scope="module")
def mixed():
    """160 clips, 10 listeners each, in tasks of 40 clips: 40 annotators, a fifth of them spammers."""
    return simulated_truth_study(clips=160, per_clip=10, spammers=0.2, heavy_only=0.1, clips_per_task=40, seed=5)


@pytest.fixture(scope="module")
def fits(mixed):
    data = mixed.data
    return {
        model: word_posteriors(
            clip=data.clip,
            annotator=data.annotator,
            levels=data.levels,
            n_annotators=len(data.annotator_keys),
            model=model,
            resamples=5,
        )
        for model in ("dawid-skene", "ordinal")
    }


@pytest.mark.parametrize("model", ["dawid-skene", "ordinal"])
def test_spammers_are_told_from_honest_annotators(mixed, fits, model):
    fit = fits[model]
    honest, spammers = fit.reliability[mixed.kind == 0], fit.reliability[mixed.kind == 1]
    assert spammers.size >= 3 and honest.min() > 0.5 and spammers.max() < 0.2
    assert np.all(np.isfinite(fit.reliability_se)) and np.all(fit.reliability_se > 0)
    assert np.all(fit.reliability_se < 0.25)
    assert fit.words_labelled.sum() == (mixed.data.levels >= 0).sum()


@pytest.mark.parametrize("model", ["dawid-skene", "ordinal"])
def test_the_posteriors_follow_the_truth(mixed, fits, model):
    fit = fits[model]
    truth = mixed.true_binary[fit.word_clip, fit.word_index]
    assert fit.posterior.shape == (160 * 15,) and np.all((fit.posterior >= 0) & (fit.posterior <= 1))
    # Truly emphasized words get a far higher posterior on average than the rest.
    assert fit.posterior[truth].mean() > 0.6
    assert fit.posterior[~truth].mean() < 0.15
    assert fit.model == model and fit.fit_seconds > 0 and fit.fitted_at.endswith("+00:00")
    assert fit.se_method == "bootstrap over clips, 5 resamples"


def test_the_ordinal_model_agrees_with_crowd_kit_on_the_binary_collapse(fits):
    """The written ordinal model against crowd-kit's Dawid-Skene on the collapsed marks: most words
    get the same label and the annotators are ranked alike."""
    ordinal, dawid_skene = fits["ordinal"], fits["dawid-skene"]
    assert np.mean(ordinal.labels() == dawid_skene.labels()) > 0.85
    assert spearmanr(ordinal.reliability, dawid_skene.reliability).statistic > 0.6
    assert ordinal.level_posterior.shape == (ordinal.posterior.size, 3)
    assert np.allclose(ordinal.level_posterior[:, 1:].sum(axis=1), ordinal.posterior)
    assert "crowd-kit 1.4" in dawid_skene.description


def test_a_heavy_only_annotator_is_less_reliable_than_an_honest_one(mixed, fits):
    for fit in fits.values():
        assert fit.reliability[mixed.kind == 2].mean() < fit.reliability[mixed.kind == 0].mean() - 0.05


def test_words_are_in_clip_then_index_order_and_a_clip_gives_its_own(fits):
    fit = fits["dawid-skene"]
    assert np.all(np.diff(fit.word_clip * 100 + fit.word_index) > 0)
    assert np.array_equal(fit.clip_posterior(3), fit.posterior[45:60])
    assert fit.clip_posterior(10_000).size == 0
    assert fit.annotators()[0].keys() == {"reliability", "reliability_se", "words"}


def test_majority_labels_are_the_published_rule(mixed):
    data = mixed.data
    word_clip, word_index, labels = majority_labels(clip=data.clip, levels=data.levels)
    first = data.levels[data.clip == 0]
    assert np.array_equal(labels[word_clip == 0], binary_labels(level_counts(first)))
    assert np.array_equal(word_index[:15], np.arange(15))


def test_unfit_input_is_refused_with_the_reason():
    clip, annotator = np.array([0, 0]), np.array([0, 1])
    with pytest.raises(ValueError, match="unknown annotator model 'glad'"):
        word_posteriors(clip=clip, annotator=annotator, levels=np.zeros((2, 3)), model="glad")
    with pytest.raises(ValueError, match="every word has the same mark"):
        word_posteriors(clip=clip, annotator=annotator, levels=np.zeros((2, 3), dtype=int), resamples=0)
    with pytest.raises(ValueError, match="levels must be 0, 1 or 2"):
        word_posteriors(clip=clip, annotator=annotator, levels=np.full((2, 3), 3), resamples=0)
    with pytest.raises(ValueError, match="there are none"):
        word_posteriors(clip=clip, annotator=annotator, levels=np.full((2, 3), -1), resamples=0)


def pilot(clips: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A pilot of `clips` clips of four words, three listeners each, where only clip 0 holds any
    mark: annotators 0 and 1 mark its word 1, annotator 2 its word 2. About a third of the
    bootstrap resamples over clips draw no clip 0, so hold no mark at all."""
    clip, annotator = np.repeat(np.arange(clips), 3), np.tile(np.arange(3), clips)
    levels = np.zeros((clip.size, 4), dtype=int)
    levels[(clip == 0) & (annotator < 2), 1] = 1
    levels[(clip == 0) & (annotator == 2), 2] = 1
    return clip, annotator, levels


def test_a_resample_dawid_skene_cannot_fit_is_a_missing_replicate():
    clip, annotator, levels = pilot(12)

    fit = word_posteriors(clip=clip, annotator=annotator, levels=levels, model="dawid-skene", resamples=20)

    assert fit.labels()[:4].tolist() == [False, True, False, False] and not fit.labels()[4:].any()
    used = re.fullmatch(
        r"bootstrap over clips, (\d+) of 20 resamples \(the other (\d+) could not be fitted.*", fit.se_method
    )
    assert used and 2 <= int(used[1]) < 20 and int(used[1]) + int(used[2]) == 20
    assert fit.resamples == 20 and np.isfinite(fit.reliability_se).all()
    ordinal = word_posteriors(clip=clip, annotator=annotator, levels=levels, resamples=20)
    assert ordinal.se_method == "bootstrap over clips, 20 resamples"  # its fit needs no mark


def test_with_fewer_than_two_replicates_fitted_the_se_is_nan():
    clip, annotator, levels = pilot(2)

    fit = word_posteriors(clip=clip, annotator=annotator, levels=levels, model="dawid-skene", resamples=3, seed=10)

    assert fit.se_method.startswith("bootstrap over clips, 1 of 3 resamples")
    assert np.isfinite(fit.reliability).all() and np.isnan(fit.reliability_se).all()
