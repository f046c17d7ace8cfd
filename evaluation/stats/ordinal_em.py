"""The ordinal model's EM (evaluation.stats.annotator_models describes the model). Pure numpy and
scipy; no Django.

Words are fitted as patterns: two words whose annotations are the same (annotator, level) cells
have the same posterior, so each distinct pattern is computed once and counted with its weight,
the number of its words. On MMEE's scale (10,000 clips x 10 listeners x 15 words) the 150,000
words are 97,000 patterns: a clip's unmarked words share one. A bootstrap resample over clips is
the same patterns with other weights (a word counts as often as its clip was drawn), so a refit
builds no table and skips the patterns of clips not drawn.
"""

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import log_ndtr, ndtr

# The latent prominence lives on this grid (the scale is set by the weak prior on the annotators'
# parameters: thresholds near 0.5 and 1.7, noise near 1, standard deviation 2).
GRID = np.linspace(-4.0, 7.0, 23)
PRIOR_MEAN = np.array([0.5, np.log(1.2), 0.0])  # t1, log(t2 - t1), log sigma
PRIOR_SD = 2.0

SMOOTHING = 1e-4  # added to the prominence distribution's mass at each grid point, so that none dies out
_EM_CYCLES = 100  # at most; SQUAREM cycles of three EM steps each
# A fit ends when a cycle raises the penalized log-likelihood by less than this share of it, or by
# less than a ten-thousandth of a nat: far below what any likelihood-based inference can tell apart (a 95 %
# interval spans 1.92 nats). A bootstrap refit stops ten times sooner: its reliabilities only feed a
# standard error that is itself known to about one part in six with 20 resamples.
_EM_TOLERANCE = 1e-7
_EM_NATS = 1e-4
_REFIT_LOOSER = 10.0


@dataclass(frozen=True)
class Patterns:
    """The words an EM fits: each distinct pattern of (annotator, level) cells once, with its weight."""

    cells: sparse.csr_matrix  # (patterns, annotators x 3): the pattern's rows in cell annotator * 3 + level
    cells_by_annotator: sparse.csr_matrix  # its transpose, for the M step's products
    weight: np.ndarray  # (patterns,) how many words it stands for
    n_annotators: int

    @classmethod
    def of_words(cls, word_cells: sparse.csr_matrix, n_annotators: int) -> tuple["Patterns", np.ndarray]:
        """The patterns of words given as `word_cells` (words x cells, the count of the word's rows in
        each cell) and each word's pattern."""
        cells = word_cells.tocsr(copy=True)  # its own: sum_duplicates works in place
        cells.sum_duplicates()  # sorted, one entry a cell: equal patterns have equal rows
        counts = np.diff(cells.indptr)
        width = max(int(counts.max(initial=0)), 1)
        place = np.arange(cells.indices.size) - np.repeat(cells.indptr[:-1], counts)
        word = np.repeat(np.arange(cells.shape[0]), counts)
        key = np.full((cells.shape[0], 2 * width), -1, dtype=np.int64)
        key[word, place] = cells.indices
        key[word, width + place] = cells.data.astype(np.int64)
        _, first, word_pattern = np.unique(key, axis=0, return_index=True, return_inverse=True)
        word_pattern = word_pattern.ravel()
        weight = np.bincount(word_pattern, minlength=first.size).astype(np.float64)
        return cls.build(cells[first], weight, n_annotators), word_pattern

    @classmethod
    def build(cls, cells: sparse.csr_matrix, weight: np.ndarray, n_annotators: int) -> "Patterns":
        return cls(sparse.csr_matrix(cells), sparse.csr_matrix(cells.T), weight, n_annotators)

    def reweighted(self, weight: np.ndarray) -> "Patterns":
        """The same patterns with other weights; those weighing nothing are left out."""
        kept = np.flatnonzero(weight > 0)
        return Patterns.build(self.cells[kept], weight[kept], self.n_annotators)

    def listeners(self) -> np.ndarray:
        """(patterns,) how many annotations gave the pattern's words a level."""
        return np.asarray(self.cells.sum(axis=1)).ravel()

    def labelled(self) -> np.ndarray:
        """(annotators,) whether the annotator gave any of the weighed words a level."""
        rows = self.cells_by_annotator @ self.weight
        return rows.reshape(self.n_annotators, 3).sum(axis=1) > 0


def fit(patterns: Patterns, start: dict | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """EM for the latent-trait ordinal model, accelerated by SQUAREM (Varadhan and Roland 2008):
    the plain EM crawls along a nearly flat ridge (the latent scale traded between the prominences
    and the thresholds) for hundreds of steps that barely move the labels, which SQUAREM's
    extrapolation along the last two steps skips. It climbs the same objective, the log-likelihood
    with the annotators' normal prior and the prominence distribution's smoothing (a Dirichlet
    prior), and is stopped when that objective stops rising; a refit (`start`: the point fit's
    "parameters" and "prior") stops ten times sooner. Returns the annotators' parameters (A, 3),
    the prominence distribution on GRID and each pattern's posterior on it."""
    if start is not None and "parameters" in start:
        parameters, prior = start["parameters"].copy(), start["prior"].copy()
    else:
        parameters = np.tile(PRIOR_MEAN, (patterns.n_annotators, 1))
        prior = np.exp(-0.5 * (GRID / 1.5) ** 2)
        prior /= prior.sum()
    state = pack(parameters, prior)
    looser = 1.0 if start is None else _REFIT_LOOSER
    previous = -np.inf
    for _ in range(_EM_CYCLES):
        once, objective = em_step(patterns, state)
        if objective - previous < looser * max(_EM_TOLERANCE * abs(objective), _EM_NATS):
            break
        twice, _ = em_step(patterns, once)
        state, previous = em_step(patterns, _leap(patterns, state, once, twice, objective))[0], objective
    parameters, prior = unpack(state, patterns.n_annotators)
    posterior, _ = e_step(patterns, parameters, prior)
    return parameters, prior, posterior


def _leap(patterns, state, once, twice, objective) -> np.ndarray:
    """SQUAREM's extrapolation from `state` along its next two EM steps: the step length
    |r| / |v| (r the first step, v the change between the two), halved towards the plain two
    steps (length 1) until the leap does not lower the objective."""
    step, curve = once - state, twice - 2 * once + state
    length = np.sqrt((step @ step) / max(curve @ curve, 1e-300))
    while length > 1:
        leap = state + 2 * length * step + length**2 * curve  # SQUAREM's alpha is -length
        if _objective(patterns, leap) >= objective:
            return leap
        length = (length + 1) / 2 if length > 1.5 else 1.0
    return twice


def pack(parameters, prior) -> np.ndarray:
    """The EM's state as one vector: the annotators' parameters and the log prominence distribution."""
    return np.concatenate([parameters.ravel(), np.log(prior)])


def unpack(state, annotators) -> tuple[np.ndarray, np.ndarray]:
    log_prior = state[annotators * 3 :]
    prior = np.exp(log_prior - log_prior.max())
    return state[: annotators * 3].reshape(annotators, 3), prior / prior.sum()


def em_step(patterns: Patterns, state: np.ndarray) -> tuple[np.ndarray, float]:
    """One EM step from `state`, and the penalized log-likelihood at `state` (which EM never lowers)."""
    parameters, prior = unpack(state, patterns.n_annotators)
    posterior, objective = e_step(patterns, parameters, prior)
    # The prominence distribution: the posteriors' mean, smoothed (the Dirichlet prior's mode).
    updated = patterns.weight @ posterior / patterns.weight.sum() + SMOOTHING
    updated /= updated.sum()
    return pack(m_step(patterns, posterior, parameters), updated), objective


def _objective(patterns, state) -> float:
    return e_step(patterns, *unpack(state, patterns.n_annotators))[1]


def e_step(patterns: Patterns, parameters: np.ndarray, prior: np.ndarray) -> tuple[np.ndarray, float]:
    """Each pattern's posterior on the grid, and the penalized log-likelihood: with the annotators'
    normal prior and the prominence distribution's smoothing, a Dirichlet prior whose mode is the
    smoothed update."""
    log_confusion = np.log(ordinal_confusion(parameters))  # (A, grid, level)
    # Each pattern's sum over its rows of log P(level | prominence), as one sparse product: the
    # pattern's (annotator, level) cells times that cell's log-probabilities on the grid.
    by_cell = log_confusion.transpose(0, 2, 1).reshape(-1, GRID.size)  # (A * 3, grid)
    joint = patterns.cells @ by_cell
    joint += np.log(prior)[None, :]
    top = joint.max(axis=1, keepdims=True)
    joint -= top
    np.exp(joint, out=joint)  # in place: the posterior, once normalized; one pass of exp
    total = joint.sum(axis=1, keepdims=True)
    joint /= total
    loglik = patterns.weight @ (top[:, 0] + np.log(total[:, 0]))
    words = patterns.weight.sum()
    penalty = -0.5 * (((parameters - PRIOR_MEAN) / PRIOR_SD) ** 2).sum() + SMOOTHING * words * np.log(prior).sum()
    return joint, float(loglik + penalty)


def m_step(patterns: Patterns, posterior: np.ndarray, parameters: np.ndarray) -> np.ndarray:
    """Maximize every annotator's expected log-likelihood (plus the prior). Annotators are independent
    given the posterior, three parameters each, so Newton's method runs on all of them at once, with
    the analytic Hessian: a few vectorized steps, where one L-BFGS over all the parameters took
    dozens of evaluations through scipy's per-call overhead (profiled: 29 of 32 s for 100
    annotations and 20 resamples)."""
    annotators = patterns.n_annotators
    # annotator, given level, prominence: each pattern adds its weighted posterior to its cells
    weighted = posterior * patterns.weight[:, None]
    expected = (patterns.cells_by_annotator @ weighted).reshape(annotators, 3, GRID.size)
    return newton_maximum(expected, parameters)


_NEWTON_STEPS = 100  # at most; a few in practice, each annotator's Newton step converging quadratically
# Relative to the annotator's objective: Newton's quadratic convergence passes 1e-4 to 1e-10 in a
# step; a step that fails below 1e-7 is rounding (the objective is a sum of hundreds of terms).
_GRADIENT_TOLERANCE = 1e-10
_FLOOR_TOLERANCE = 1e-7


def newton_maximum(expected: np.ndarray, parameters: np.ndarray) -> np.ndarray:
    """Each annotator's maximum of `ordinal_terms` (`expected`: A, level, grid), by Newton steps
    safeguarded per annotator: the Hessian's eigenvalues taken in absolute value (so a step always
    climbs) and damped, the damping raised until the step improves the annotator's objective and
    lowered after one that does."""
    theta = parameters.copy()
    value, gradient, hessian = ordinal_terms(theta, expected)
    damping = np.zeros(theta.shape[0])
    floor = np.zeros(theta.shape[0], dtype=bool)  # no step improves them in floating point
    for _ in range(_NEWTON_STEPS):
        active = (np.abs(gradient).max(axis=1) > _GRADIENT_TOLERANCE * (1 + np.abs(value))) & ~floor
        if not active.any():
            break
        curvature, basis = np.linalg.eigh(-hessian[active])
        curvature = np.maximum(np.abs(curvature), 1e-8) + damping[active, None]
        along = np.einsum("aji,aj->ai", basis, gradient[active]) / curvature
        step = np.einsum("aij,aj->ai", basis, along)
        # At most one unit a parameter (they are thresholds and logs): a flat direction's step is
        # not sent where the objective overflows.
        step /= np.maximum(np.abs(step).max(axis=1, keepdims=True), 1.0)
        trial = theta.copy()
        trial[active] += step
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            trial_value, trial_gradient, trial_hessian = ordinal_terms(trial[active], expected[active])
        finite = np.isfinite(trial_gradient).all(axis=1) & np.isfinite(trial_hessian).all(axis=(1, 2))
        better = (trial_value >= value[active]) & finite
        moved = np.flatnonzero(active)[better]
        theta[moved] = trial[moved]
        value[moved], gradient[moved], hessian[moved] = (
            trial_value[better],
            trial_gradient[better],
            trial_hessian[better],
        )
        stuck = np.flatnonzero(active)[~better]
        damping[moved] *= 0.1
        damping[stuck] = np.maximum(10 * damping[stuck], 1e-3 * (1 + np.abs(value[stuck])))
        floor[stuck] = np.abs(gradient[stuck]).max(axis=1) <= _FLOOR_TOLERANCE * (1 + np.abs(value[stuck]))
    return theta


def ordinal_terms(theta: np.ndarray, expected: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per annotator, the objective of the M step, sum of expected[j, y, z] log P_j(y | z) plus the
    log of the weak normal prior, with its gradient and Hessian in (t1, log gap, log sigma):
    (A,), (A, 3), (A, 3, 3); `expected` is (A, level, grid). Level 0 is below t1, level 2 above t2:
    with a1, a2 the thresholds' distances from the prominence in units of sigma, the chain rule goes
    through (a1, a2). Written level by level on (A, grid) arrays and summed over the grid before the
    per-annotator factors are applied: half the time of (A, grid, level) stacks, in the step that
    takes half of a large study's fit."""
    t1, t2, sigma = thresholds(theta)
    gap, scale = t2 - t1, 1.0 / sigma
    a1 = (t1[:, None] - GRID) * scale[:, None]
    a2 = (t2[:, None] - GRID) * scale[:, None]
    c1, c2 = ndtr(a1), ndtr(a2)
    p0, p1, p2 = np.maximum(c1, 1e-12), np.maximum(c2 - c1, 1e-12), np.maximum(1 - c2, 1e-12)
    e0, e1, e2 = expected[:, 0], expected[:, 1], expected[:, 2]
    offset = theta - PRIOR_MEAN
    logp = e0 * log_ndtr(a1) + e1 * np.log(p1) + e2 * log_ndtr(-a2)
    value = logp.sum(axis=1) - 0.5 * ((offset / PRIOR_SD) ** 2).sum(axis=1)
    w0, w1, w2 = e0 / p0, e1 / p1, e2 / p2  # d value / d p
    d1 = np.exp(-0.5 * a1**2) * _INVERSE_ROOT_2PI  # phi(a1) = d c1 / d a1
    d2 = np.exp(-0.5 * a2**2) * _INVERSE_ROOT_2PI
    # d value / d a: p0 = c1, p1 = c2 - c1, p2 = 1 - c2
    g1, g2 = (w0 - w1) * d1, (w1 - w2) * d2
    # second derivatives in (a1, a2); phi'(a) = -a phi(a); w / p is minus d w / d p
    v1 = w1 / p1
    h11 = -a1 * g1 - d1**2 * (w0 / p0 + v1)
    h22 = -a2 * g2 - d2**2 * (v1 + w2 / p2)
    h12 = d1 * d2 * v1
    sums = _grid_sums(a1, a2, g1, g2, h11, h12, h22)
    gradient = np.stack(
        [(sums["g1"] + sums["g2"]) * scale, sums["g2"] * gap * scale, -sums["a1 g1"] - sums["a2 g2"]], axis=1
    )
    gradient -= offset / PRIOR_SD**2  # t2 moves with t1; d a / d log sigma = -a
    return value, gradient, _hessian(sums, gap, scale)


_INVERSE_ROOT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def _grid_sums(a1, a2, g1, g2, h11, h12, h22) -> dict[str, np.ndarray]:
    """The sums over the grid the gradient and Hessian are made of, per annotator."""
    a1h11, a2h22 = a1 * h11, a2 * h22
    a1h12, a2h12 = a1 * h12, a2 * h12
    terms = {
        "g1": g1,
        "g2": g2,
        "a1 g1": a1 * g1,
        "a2 g2": a2 * g2,
        "h11": h11,
        "h12": h12,
        "h22": h22,
        "a1 h11": a1h11,
        "a2 h22": a2h22,
        "a1 h12": a1h12,
        "a2 h12": a2h12,
        "a1 a1 h11": a1 * a1h11,
        "a1 a2 h12": a2 * a1h12,
        "a2 a2 h22": a2 * a2h22,
    }
    return {name: term.sum(axis=1) for name, term in terms.items()}


def _hessian(sums: dict[str, np.ndarray], gap: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The Hessian in (t1, log gap, log sigma) from the grid sums. The Jacobian of (a1, a2) in the
    parameters is [[s, 0, -a1], [s, gap s, -a2]] (s = 1 / sigma); a1 and a2 are curved too:
    d2 a / d t1 d log sigma = -s, d2 a / d (log sigma)^2 = a, and a2 alone d2 a2 / d (log gap)^2 =
    gap s, d2 a2 / d log gap d log sigma = -gap s."""
    s = sums
    gs = gap * scale
    hessian = np.empty((gap.size, 3, 3))
    hessian[:, 0, 0] = scale**2 * (s["h11"] + 2 * s["h12"] + s["h22"])
    hessian[:, 0, 1] = gap * scale**2 * (s["h12"] + s["h22"])
    hessian[:, 0, 2] = -scale * (s["a1 h11"] + s["a1 h12"] + s["a2 h12"] + s["a2 h22"] + s["g1"] + s["g2"])
    hessian[:, 1, 1] = gs * (gs * s["h22"] + s["g2"])
    hessian[:, 1, 2] = -gs * (s["a1 h12"] + s["a2 h22"] + s["g2"])
    hessian[:, 2, 2] = s["a1 a1 h11"] + 2 * s["a1 a2 h12"] + s["a2 a2 h22"] + s["a1 g1"] + s["a2 g2"]
    hessian[:, 1, 0], hessian[:, 2, 0], hessian[:, 2, 1] = hessian[:, 0, 1], hessian[:, 0, 2], hessian[:, 1, 2]
    hessian -= np.eye(3) / PRIOR_SD**2
    return hessian


def ordinal_confusion(parameters: np.ndarray) -> np.ndarray:
    """(A, 3) parameters to (A, prominence on the grid, given level) probabilities."""
    t1, t2, sigma = thresholds(parameters)
    z = GRID[None, :]
    below1 = ndtr((t1[:, None] - z) / sigma[:, None])
    below2 = ndtr((t2[:, None] - z) / sigma[:, None])
    confusion = np.stack([below1, below2 - below1, 1 - below2], axis=2)
    return np.clip(confusion, 1e-12, 1.0)


def thresholds(parameters: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t1, t2, sigma) of each annotator's parameters (t1, log gap, log sigma)."""
    t1 = parameters[:, 0]
    return t1, t1 + np.exp(parameters[:, 1]), np.exp(parameters[:, 2])
