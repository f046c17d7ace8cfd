"""The ordinal model's fast fit (analytic Newton M step, SQUAREM-accelerated EM) against plain
computations: finite differences of its objective, scipy's L-BFGS on the same M step, and the
unaccelerated EM run until it stops moving."""

import numpy as np
import pytest
from scipy.optimize import check_grad, minimize

from evaluation.stats import annotator_models as models
from evaluation.stats.simulated_truth import simulated_truth_study


@pytest.fixture(scope="module")
def table():
    data = simulated_truth_study(clips=40, per_clip=5, spammers=0.2, clips_per_task=10, seed=3).data
    return models._Table.build(data.clip, data.annotator, data.levels, None)


@pytest.fixture(scope="module")
def expected(table):
    """An M step's expected counts: the E step of the prior's starting point."""
    prior = np.exp(-0.5 * (models.GRID / 1.5) ** 2)
    prior /= prior.sum()
    start = np.tile(models._PRIOR_MEAN, (table.n_annotators, 1))
    posterior, _ = models._ordinal_e_step(table, start, prior / prior.sum(), table.word_clip.size)
    cells = (table.word_cells.T @ posterior).reshape(table.n_annotators, 3, models.GRID.size)
    return cells.transpose(0, 2, 1)


def test_the_gradient_and_hessian_are_the_objectives_derivatives(expected):
    rng = np.random.default_rng(0)
    theta = models._PRIOR_MEAN + rng.normal(0.0, 0.3, size=(expected.shape[0], 3))
    value, gradient, hessian = models._ordinal_terms(theta, expected)
    flat = theta.shape

    def total(x):
        return models._ordinal_terms(x.reshape(flat), expected)[0].sum()

    def total_gradient(x):
        return models._ordinal_terms(x.reshape(flat), expected)[1].ravel()

    assert check_grad(total, total_gradient, theta.ravel(), epsilon=1e-6) < 1e-4 * np.abs(gradient).max()
    step = 1e-5
    for k in range(3):
        shift = np.zeros(flat)
        shift[:, k] = step
        numeric = (
            models._ordinal_terms(theta + shift, expected)[1] - models._ordinal_terms(theta - shift, expected)[1]
        ) / (2 * step)
        assert np.allclose(numeric, hessian[:, :, k], rtol=1e-5, atol=1e-5 * np.abs(hessian).max())
    assert np.allclose(hessian, hessian.transpose(0, 2, 1))
    assert value.shape == (flat[0],)


def test_the_newton_m_step_finds_lbfgs_maximum(expected):
    start = np.tile(models._PRIOR_MEAN, (expected.shape[0], 1))
    newton = models._newton_maximum(expected, start)

    def negative(x):
        value, gradient, _ = models._ordinal_terms(x.reshape(start.shape), expected)
        return -value.sum(), -gradient.ravel()

    reference = minimize(
        negative, start.ravel(), jac=True, method="L-BFGS-B", options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10}
    )
    assert np.allclose(newton.ravel(), reference.x, atol=1e-4)
    assert -negative(newton.ravel())[0] >= -reference.fun - 1e-9


def _plain_em(table, rounds: int, tolerance: float):
    """The unaccelerated EM, one step at a time, until the penalized log-likelihood stops rising."""
    state = models._pack(np.tile(models._PRIOR_MEAN, (table.n_annotators, 1)), np.exp(-0.5 * (models.GRID / 1.5) ** 2))
    previous = -np.inf
    for _ in range(rounds):
        following, objective = models._em_step(table, state)
        if objective - previous < tolerance:
            break
        state, previous = following, objective
    return models._unpack(state, table.n_annotators), objective


def test_the_accelerated_fit_gives_the_plain_ems_labels(table):
    (parameters, prior), plain_objective = _plain_em(table, rounds=3000, tolerance=1e-6)
    posterior, _ = models._ordinal_e_step(table, parameters, prior, table.word_clip.size)
    plain = models._ordinal_summary(table, parameters, prior, posterior)
    fast = models._fit_ordinal(table, None)
    _, fast_objective = models._em_step(table, models._pack(fast["parameters"], fast["prior"]))
    # The same maximum, to within the fits' tolerances, and the same labels. The maximum lies at the
    # end of a nearly flat ridge (the plain EM climbs its last hundredth of a nat in hundreds of
    # steps), along which a posterior still moves by a few hundredths: a fit stopped early on it
    # (as without SQUAREM's backtracking, 0.16 nats short) moves them by 0.2 and changes labels.
    assert fast_objective >= plain_objective - 0.01
    assert np.abs(fast["posterior"] - plain["posterior"]).max() < 0.03
    assert np.array_equal(fast["posterior"] > 0.5, plain["posterior"] > 0.5)
    assert np.abs(fast["reliability"] - plain["reliability"]).max() < 0.01
