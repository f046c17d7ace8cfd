"""The ordinal model's fast fit (analytic Newton M step, SQUAREM-accelerated EM) against plain
computations: finite differences of its objective, scipy's L-BFGS on the same M step, and the
unaccelerated EM run until it stops moving."""

import numpy as np
import pytest
from scipy.optimize import check_grad, minimize

from evaluation.stats import annotator_models as models
from evaluation.stats import ordinal_em as em
from evaluation.stats.simulated_truth import simulated_truth_study


@pytest.fixture(scope="module")
def table():
    data = simulated_truth_study(clips=40, per_clip=5, spammers=0.2, clips_per_task=10, seed=3).data
    return models._Table.build(data.clip, data.annotator, data.levels, None)


@pytest.fixture(scope="module")
def words(table):
    """Every word a pattern of its own, weighing one: the EM without the pattern compression."""
    return em.Patterns.build(table.word_cells, np.ones(table.word_clip.size), table.n_annotators)


@pytest.fixture(scope="module")
def expected(table):
    """An M step's expected counts: the E step of the prior's starting point, word by word."""
    prior = np.exp(-0.5 * (em.GRID / 1.5) ** 2)
    prior /= prior.sum()
    start = np.tile(em.PRIOR_MEAN, (table.n_annotators, 1))
    posterior, _ = _word_posteriors(table, start, prior)
    return (table.word_cells.T @ posterior).reshape(table.n_annotators, 3, em.GRID.size)


def _word_posteriors(table, parameters, prior):
    """Each word's posterior on the grid and the log-likelihood, straight from the model: the prior
    times every row's P(level | prominence), normalized."""
    confusion = em.ordinal_confusion(parameters)  # (A, grid, level)
    joint = np.tile(prior, (table.word_clip.size, 1))
    for row in range(table.row_word.size):
        joint[table.row_word[row]] *= confusion[table.row_annotator[row], :, table.row_level[row]]
    total = joint.sum(axis=1, keepdims=True)
    return joint / total, float(np.log(total).sum())


def test_the_gradient_and_hessian_are_the_objectives_derivatives(expected):
    rng = np.random.default_rng(0)
    theta = em.PRIOR_MEAN + rng.normal(0.0, 0.3, size=(expected.shape[0], 3))
    value, gradient, hessian = em.ordinal_terms(theta, expected)
    flat = theta.shape

    def total(x):
        return em.ordinal_terms(x.reshape(flat), expected)[0].sum()

    def total_gradient(x):
        return em.ordinal_terms(x.reshape(flat), expected)[1].ravel()

    assert check_grad(total, total_gradient, theta.ravel(), epsilon=1e-6) < 1e-4 * np.abs(gradient).max()
    step = 1e-5
    for k in range(3):
        shift = np.zeros(flat)
        shift[:, k] = step
        numeric = (em.ordinal_terms(theta + shift, expected)[1] - em.ordinal_terms(theta - shift, expected)[1]) / (
            2 * step
        )
        assert np.allclose(numeric, hessian[:, :, k], rtol=1e-5, atol=1e-5 * np.abs(hessian).max())
    assert np.allclose(hessian, hessian.transpose(0, 2, 1))
    assert value.shape == (flat[0],)


def test_the_newton_m_step_finds_lbfgs_maximum(expected):
    start = np.tile(em.PRIOR_MEAN, (expected.shape[0], 1))
    newton = em.newton_maximum(expected, start)

    def negative(x):
        value, gradient, _ = em.ordinal_terms(x.reshape(start.shape), expected)
        return -value.sum(), -gradient.ravel()

    reference = minimize(
        negative, start.ravel(), jac=True, method="L-BFGS-B", options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10}
    )
    assert np.allclose(newton.ravel(), reference.x, atol=1e-4)
    assert -negative(newton.ravel())[0] >= -reference.fun - 1e-9


def test_the_e_step_of_patterns_is_the_e_step_of_words(table, words):
    """Words with the same annotations share a posterior: fitted as one pattern that weighs as many."""
    patterns, word_pattern = table.patterns
    assert patterns.weight.size < table.word_clip.size
    assert patterns.weight.sum() == table.word_clip.size
    rng = np.random.default_rng(1)
    parameters = em.PRIOR_MEAN + rng.normal(0.0, 0.3, size=(table.n_annotators, 3))
    prior = rng.dirichlet(np.ones(em.GRID.size))
    by_word, loglik = _word_posteriors(table, parameters, prior)
    by_pattern, objective = em.e_step(patterns, parameters, prior)
    assert np.allclose(by_pattern[word_pattern], by_word, atol=1e-12)
    assert np.isclose(objective, em.e_step(words, parameters, prior)[1])
    penalty = objective - loglik
    assert np.isclose(penalty, em.e_step(words, parameters, prior)[1] - loglik)
    state = em.pack(parameters, prior)
    assert np.allclose(em.em_step(patterns, state)[0], em.em_step(words, state)[0], atol=1e-8)


def _plain_em(words, rounds: int, tolerance: float):
    """The unaccelerated EM on every word, one step at a time, until the penalized log-likelihood
    stops rising."""
    state = em.pack(np.tile(em.PRIOR_MEAN, (words.n_annotators, 1)), np.exp(-0.5 * (em.GRID / 1.5) ** 2))
    previous = -np.inf
    for _ in range(rounds):
        following, objective = em.em_step(words, state)
        if objective - previous < tolerance:
            break
        state, previous = following, objective
    return em.unpack(state, words.n_annotators), objective


def test_the_accelerated_fit_gives_the_plain_ems_labels(table, words):
    (parameters, prior), plain_objective = _plain_em(words, rounds=3000, tolerance=1e-6)
    posterior, _ = em.e_step(words, parameters, prior)
    plain = models._ordinal_summary(table, models._TypicalListener.of(parameters, prior, words), posterior)
    fast = models._fit_ordinal(table, None, None)
    _, fast_objective = em.em_step(words, em.pack(fast["parameters"], fast["prior"]))
    # The same maximum, to within the fits' tolerances, and the same labels. The maximum lies at the
    # end of a nearly flat ridge (the plain EM climbs its last hundredth of a nat in hundreds of
    # steps), along which a posterior still moves by a few hundredths: a fit stopped early on it
    # (as without SQUAREM's backtracking, 0.16 nats short) moves them by 0.2 and changes labels.
    assert fast_objective >= plain_objective - 0.01
    assert np.abs(fast["posterior"] - plain["posterior"]).max() < 0.03
    assert np.array_equal(fast["posterior"] > 0.5, plain["posterior"] > 0.5)
    assert np.abs(fast["reliability"] - plain["reliability"]).max() < 0.01


def test_a_refit_by_weights_is_the_fit_of_the_resampled_clips(table):
    """A bootstrap refit weighs each word by its clip's draws; the same fit on a table that holds
    each drawn clip as often as it was drawn (a clip drawn twice is two clips) gives the same
    reliabilities. Both start from the prior here, so that they run the same steps."""
    clips = np.unique(table.word_clip)
    drawn = np.random.default_rng(2).choice(clips, size=clips.size, replace=True)
    assert np.unique(drawn).size < clips.size  # some clips drawn twice, some not at all
    by_weight = models._fit_ordinal(table, None, drawn)["reliability"]
    by_table = models._fit_ordinal(table.resampled(drawn), None, None)["reliability"]
    assert np.allclose(by_weight, by_table, atol=1e-6, equal_nan=True)
    assert np.isnan(by_weight).any() == np.isnan(by_table).any()
