"""Cohen's kappa (any number of categories, weighted), its interval, and Light's kappa. No database.

Published values used:
- irrCAC (K. Gwet's R package) README, kappa2.table(cont3x3abstractors), the 3 x 3 table
  [[13, 0, 0], [0, 20, 7], [0, 4, 56]]: Cohen's kappa 0.7964094, se 0.05891072, interval (0.68, 0.913).
- irrCAC vignette "Weighted Chance-corrected Agreement Coefficients", kappa2.table(cont3x3abstractors,
  weights = quadratic.weights(1:3)): 0.8921569, se 0.03535151, interval (0.822, 0.962).
- Cohen (1968), Psychol. Bull. 70, the illustration of weighted kappa: two judges, 200 cases, three
  categories, proportions [[.44, .07, .09], [.05, .20, .05], [.01, .03, .06]], disagreement weights
  1, 3 and 6; "Cohen reports .492 and .348" (unweighted and weighted kappa), as quoted in the
  documentation of R psych's cohen.kappa, whose example reproduces it.
- R irr 0.84, kappam.light(diagnoses) (Fleiss 1971's 30 patients x 6 psychiatrists, rdrr.io's
  example output): "Light's Kappa for m Raters ... Kappa = 0.459".
"""

import itertools
import math
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from evaluation.stats.intervals import MIN_UNITS
from evaluation.stats.kappa import (
    UNDEFINED,
    WEIGHTINGS,
    agreement_weights,
    cohen_kappa,
    fce_standard_error,
    lights_kappa,
    table_kappas,
)
from evaluation.stats.resampling import generator
from tests.evaluation.stats.test_fleiss import FLEISS_1971

nan = np.nan
ABSTRACTORS = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
COHEN_1968 = np.array([[88, 14, 18], [10, 40, 10], [2, 6, 12]])  # his proportions x 200 cases
COHEN_1968_DISAGREEMENT = np.array([[0, 1, 3], [1, 0, 6], [3, 6, 0]])
SKLEARN_WEIGHTS = {"unweighted": None, "linear": "linear", "quadratic": "quadratic"}


def labels_of(table):
    """Two label vectors whose contingency table is `table`."""
    rows, columns = np.nonzero(table)
    counts = table[rows, columns]
    return np.repeat(rows, counts), np.repeat(columns, counts)


def sklearn_kappa(a, b, q, weighting):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns, then answers NaN, when kappa is 0/0
        return cohen_kappa_score(a, b, labels=list(range(q)), weights=SKLEARN_WEIGHTS[weighting])


def test_irrcac_unweighted_example_kappa_standard_error_and_interval():
    a, b = labels_of(ABSTRACTORS)

    result = cohen_kappa(a, b, categories=[0, 1, 2], resamples=0)

    assert round(result.value, 7) == 0.7964094
    assert round(result.se, 8) == 0.05891072
    assert (round(result.ci[0], 2), round(result.ci[1], 3)) == (0.68, 0.913)


def test_irrcac_quadratic_example_kappa_standard_error_and_interval():
    a, b = labels_of(ABSTRACTORS)

    result = cohen_kappa(a, b, categories=[0, 1, 2], weighting="quadratic", resamples=0)

    assert round(result.value, 7) == 0.8921569
    assert round(result.se, 8) == 0.03535151
    assert (round(result.ci[0], 3), round(result.ci[1], 3)) == (0.822, 0.962)


def test_cohen_1968_illustration_unweighted_and_with_his_weights():
    assert round(float(table_kappas(COHEN_1968[None])[0]), 3) == 0.492
    assert round(float(table_kappas(COHEN_1968[None], COHEN_1968_DISAGREEMENT)[0]), 3) == 0.348


def test_lights_kappa_of_fleiss_1971_diagnoses_is_irrs():
    result = lights_kappa(FLEISS_1971.T, categories=[1, 2, 3, 4, 5])

    assert round(result.value, 3) == 0.459
    assert (result.pairs, result.pairs_undefined) == (15, 0)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_matches_scikit_learn_on_random_labels(seed, weighting):
    rng = np.random.default_rng(seed)
    q, n = int(rng.integers(2, 6)), int(rng.integers(1, 120))
    a = rng.choice(q, size=n, p=rng.dirichlet(np.ones(q) * rng.uniform(0.2, 3)))
    b = np.where(rng.random(n) < rng.random(), a, rng.choice(q, size=n))

    ours = cohen_kappa(a, b, categories=list(range(q)), weighting=weighting, resamples=0)

    expected = sklearn_kappa(a, b, q, weighting)
    if math.isnan(expected):
        assert (ours.value, ours.reason) == (None, UNDEFINED)
    else:
        assert ours.value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_standard_error_matches_statsmodels_on_random_tables(seed, weighting):
    rng = np.random.default_rng(500 + seed)
    q = int(rng.integers(2, 6))
    table = rng.integers(0, 30, size=(q, q)) + np.diag(rng.integers(0, 60, size=q))
    expected = cohens_kappa(table, wt=SKLEARN_WEIGHTS[weighting]) if weighting != "unweighted" else cohens_kappa(table)

    assert table_kappas(table[None], weighting)[0] == pytest.approx(expected.kappa, abs=1e-9)
    assert fce_standard_error(table, weighting) == pytest.approx(expected.std_kappa, abs=1e-9)


def test_weights_are_those_of_the_literature():
    assert agreement_weights(3, "linear").tolist() == [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]
    assert agreement_weights(3, "quadratic").tolist() == [[1, 0.75, 0], [0.75, 1, 0.75], [0, 0.75, 1]]
    assert agreement_weights(2, "quadratic").tolist() == agreement_weights(2, "unweighted").tolist()


def test_declared_categories_keep_their_distance_when_one_is_unused():
    a, b = [0, 0, 3, 3, 1, 0, 1], [0, 3, 3, 1, 1, 0, 0]  # nobody answered 2

    ours = cohen_kappa(a, b, categories=[0, 1, 2, 3], weighting="linear", resamples=0).value

    assert ours == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="linear"), abs=1e-12)
    assert ours != pytest.approx(cohen_kappa_score(a, b, weights="linear"))  # sklearn's default puts 1, 3 adjacent


def test_missing_labels_are_left_out_pair_by_pair():
    a = [0, 1, None, 2, nan, 1, 0, 2]
    b = [0, 1, 1, 2, 0, None, 0, 1]

    result = cohen_kappa(a, b, categories=[0, 1, 2], resamples=0)

    assert result.units == 5
    assert result.value == pytest.approx(cohen_kappa_score([0, 1, 2, 0, 2], [0, 1, 2, 0, 1]), abs=1e-12)


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_edge_cases_are_undefined_with_a_reason_never_one(weighting):
    one_category = cohen_kappa([1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], categories=[0, 1, 2], weighting=weighting)
    one_rater_per_unit = cohen_kappa([0, None, 2], [None, 1, None], categories=[0, 1, 2], weighting=weighting)
    all_missing = cohen_kappa([None, nan], [nan, None], categories=[0, 1, 2], weighting=weighting)

    assert (one_category.value, one_category.reason, one_category.units) == (None, UNDEFINED, 6)
    assert one_category.ci is None and one_category.bootstrap is None
    for result in (one_rater_per_unit, all_missing):
        assert (result.value, result.reason, result.units) == (None, "no unit rated by both raters", 0)
    # One rater constant, the other not: defined, no agreement beyond chance.
    assert cohen_kappa([0, 0, 0, 0], [0, 1, 0, 1], categories=[0, 1], resamples=0).value == 0.0


def test_too_few_units_give_a_kappa_without_an_interval():
    few = cohen_kappa([0, 1, 1, 0], [0, 1, 0, 0], categories=[0, 1], resamples=100)

    assert few.value is not None and few.se is not None
    assert (few.ci, few.bootstrap) == (None, None)
    assert few.ci_reason == f"too few units for an interval: 4 (needs at least {MIN_UNITS})"
    assert few.bootstrap_reason == few.ci_reason


def test_a_labels_outside_the_categories_is_refused():
    with pytest.raises(ValueError, match="not one of the categories"):
        cohen_kappa([0, 3], [0, 1], categories=[0, 1, 2])
    with pytest.raises(ValueError, match="weighting"):
        table_kappas(ABSTRACTORS[None], "cubic")


def test_the_bootstrap_recomputes_each_resample_of_units():
    rng = np.random.default_rng(3)
    a = rng.choice(3, size=60, p=[0.6, 0.3, 0.1])
    b = np.where(rng.random(60) < 0.7, a, rng.choice(3, size=60))

    result = cohen_kappa(a, b, categories=[0, 1, 2], weighting="quadratic", resamples=40, seed=5)

    drawn = generator(seed=5).integers(0, 60, size=(40, 60), dtype=np.uint32)
    kappas = [sklearn_kappa(a[row], b[row], 3, "quadratic") for row in drawn]
    low, high = np.percentile(kappas, [2.5, 97.5])
    assert (result.bootstrap.low, result.bootstrap.high) == pytest.approx((low, high), abs=1e-9)
    assert (
        result.bootstrap
        == cohen_kappa(a, b, categories=[0, 1, 2], weighting="quadratic", resamples=40, seed=5).bootstrap
    )


def test_the_bootstrap_agrees_with_the_fce_standard_error_on_many_units():
    rng = np.random.default_rng(8)
    a = rng.choice(3, size=3000, p=[0.5, 0.3, 0.2])
    b = np.where(rng.random(3000) < 0.6, a, rng.choice(3, size=3000))

    result = cohen_kappa(a, b, categories=[0, 1, 2], weighting="linear", resamples=1500, seed=1)

    assert result.bootstrap.se == pytest.approx(result.se, rel=0.1)
    assert result.bootstrap.low == pytest.approx(result.ci[0], abs=0.01)


def test_a_cluster_bootstrap_draws_whole_clusters():
    a = [0, 1, 1, 0, 2, 2, 0, 1, 0, 0, 1, 2]
    b = [0, 1, 0, 0, 2, 1, 0, 1, 1, 0, 1, 2]
    clips = [7, 7, 7, 3, 3, 3, 9, 9, 1, 1, 5, 5]

    result = cohen_kappa(a, b, categories=[0, 1, 2], clusters=clips, resamples=30, seed=2)

    order = sorted(set(clips))  # clusters are numbered in sorted order
    drawn = generator(seed=2).integers(0, len(order), size=(30, len(order)), dtype=np.uint32)
    kappas = []
    for row in drawn:
        units = [u for c in row for u in range(len(a)) if clips[u] == order[c]]
        kappas.append(sklearn_kappa(np.array(a)[units], np.array(b)[units], 3, "unweighted"))
    defined = [k for k in kappas if not math.isnan(k)]
    assert result.bootstrap.low == pytest.approx(float(np.percentile(defined, 2.5)), abs=1e-9)
    assert result.bootstrap.undefined == len(kappas) - len(defined)


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_lights_kappa_is_the_mean_of_pairwise_sklearn_kappas_with_missing_data(seed, weighting):
    rng = np.random.default_rng(900 + seed)
    raters, units, q = int(rng.integers(2, 7)), int(rng.integers(2, 40)), int(rng.integers(2, 5))
    matrix = rng.choice(q, size=(raters, units), p=rng.dirichlet(np.ones(q))).astype(float)
    matrix[rng.random(matrix.shape) < rng.random() * 0.6] = nan

    result = lights_kappa(matrix, categories=list(range(q)), weighting=weighting)

    kappas = []
    for i, j in itertools.combinations(range(raters), 2):
        both = ~np.isnan(matrix[i]) & ~np.isnan(matrix[j])
        if both.any():
            kappas.append(sklearn_kappa(matrix[i][both].astype(int), matrix[j][both].astype(int), q, weighting))
    defined = [k for k in kappas if not math.isnan(k)]
    assert (result.pairs, result.pairs_undefined) == (len(kappas), len(kappas) - len(defined))
    if defined:
        assert result.value == pytest.approx(float(np.mean(defined)), abs=1e-9)
    else:
        assert result.value is None and result.reason


def test_lights_kappa_edge_cases():
    assert lights_kappa([[0, nan], [nan, 1]], categories=[0, 1]).reason == "no two raters rated a common unit"
    assert lights_kappa([[nan, nan], [nan, nan]], categories=[0, 1]).value is None
    constant = lights_kappa([[1, 1, 1], [1, 1, 1], [1, 1, nan]], categories=[0, 1, 2], weighting="quadratic")
    assert (constant.value, constant.pairs, constant.pairs_undefined) == (None, 3, 3)
    assert constant.reason.startswith("undefined for all 3 rater pairs")
