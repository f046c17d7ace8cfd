"""Gwet's AC1 and AC2 against irrCAC's published examples and a unit-by-unit restatement. No database.

There is no Python package of Gwet's coefficients among the project's dependencies, so the random
data are checked against `irrcac_reference`, a plain transliteration of irrCAC's gwet.ac1.raw (R,
K. Gwet), which the published values below pin in turn.

Published values used:
- irrCAC README, gwet.ac1.raw(cac.raw4raters): pa 0.8181818, pe 0.1903212, AC1 0.77544, se 0.14295,
  conf.int (0.461, 1). cac.raw4raters is Gwet (2014), Handbook p. 120: 12 units, 4 raters, missing values.
- irrCAC vignette "Weighted Chance-corrected Agreement Coefficients":
  gwet.ac1.raw(cac.raw4raters, weights = "quadratic"): pa 0.9753788, pe 0.7137044, AC2 0.914,
  se 0.10396, conf.int (0.685, 1); gwet.ac1.dist(distrib.6raters, weights = quadratic.weights(1:5)):
  AC2 0.4837438, se 0.1058227, (0.257, 0.711), pa 0.8544444, pe 0.7180556.
- irrCAC README, gwet.ac1.dist(distrib.6raters): AC1 0.4448007, se 0.08418757, (0.264, 0.625),
  pa 0.5511111, pe 0.1914815.
- irrCAC's Python port (afergadis/irrCAC, test/unit/irrCAC/raw/test_gwet.py): raw_5observers (Gwet
  2014, p. 125): pa 0.616, pe 0.236, AC1 0.497, se 0.122, (0.235, 0.758); raw_4raters with linear
  weights: pa 0.939, pe 0.571, AC2 0.859, se 0.117, (0.600, 1).
"""

import math

import numpy as np
import pytest

from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.gwet import gwet_ac, gwet_cluster_statistics, gwet_from_sums, gwet_layout
from evaluation.stats.intervals import MIN_UNITS
from evaluation.stats.kappa import WEIGHTINGS, agreement_weights
from evaluation.stats.ratings import counts_from_matrix
from evaluation.stats.resampling import bootstrap_sums, cluster_codes, generator
from tests.evaluation.stats.test_fleiss import RAW_4_RATERS, RAW_5_OBSERVERS

nan = np.nan
DISTRIB_6_RATERS = np.array(
    [
        [0, 0, 0, 6, 0],
        [0, 3, 0, 0, 3],
        [0, 1, 4, 0, 1],
        [0, 0, 0, 0, 6],
        [0, 3, 0, 3, 0],
        [2, 0, 4, 0, 0],
        [0, 0, 4, 0, 2],
        [2, 0, 3, 1, 0],
        [2, 0, 0, 4, 0],
        [0, 0, 0, 0, 6],
        [1, 0, 0, 5, 0],
        [1, 1, 0, 4, 0],
        [0, 3, 3, 0, 0],
        [1, 0, 0, 5, 0],
        [0, 2, 0, 3, 1],
    ]
)


def irrcac_reference(counts, weighting="unweighted"):
    """irrCAC's gwet.ac1.raw on a units x categories count matrix, unit by unit: (AC, pa, pe, se)."""
    counts = [list(map(int, row)) for row in counts if sum(row) > 0]
    n, q = len(counts), len(counts[0])
    w = agreement_weights(q, weighting).tolist()
    r = [sum(row) for row in counts]
    weighted = [[sum(w[k][m] * row[m] for m in range(q)) for k in range(q)] for row in counts]
    agree = [sum(row[k] * (ws[k] - 1) for k in range(q)) for row, ws in zip(counts, weighted)]
    n2 = sum(1 for x in r if x >= 2)
    pa = sum(a / (x * (x - 1)) for a, x in zip(agree, r) if x >= 2) / n2
    pi = [sum(row[k] / x for row, x in zip(counts, r)) / n for k in range(q)]
    factor = sum(map(sum, w)) / (q * (q - 1))
    pe = factor * sum(p * (1 - p) for p in pi)
    ac = (pa - pe) / (1 - pe)
    linear = []
    for row, x, a in zip(counts, r, agree):
        pa_i = a / (x * (x - 1)) if x >= 2 else 0.0
        ac_i = (n / n2) * (pa_i - pe * (x >= 2)) / (1 - pe)
        pe_i = factor * sum(c * (1 - p) for c, p in zip(row, pi)) / x
        linear.append(ac_i - 2 * (1 - ac) * (pe_i - pe) / (1 - pe))
    se = math.sqrt(sum((v - ac) ** 2 for v in linear) / (n * (n - 1)))
    return ac, pa, pe, se


def test_irrcac_ac1_of_raw4raters():
    result = gwet_ac(counts_from_matrix(RAW_4_RATERS, [1, 2, 3, 4, 5]))

    assert (round(result.pa, 7), round(result.pe, 7)) == (0.8181818, 0.1903212)
    assert (round(result.value, 5), round(result.se_units, 5)) == (0.77544, 0.14295)
    assert (round(result.ci_units[0], 3), result.ci_units[1]) == (0.461, 1.0)


def test_irrcac_ac2_quadratic_of_raw4raters():
    result = gwet_ac(counts_from_matrix(RAW_4_RATERS, [1, 2, 3, 4, 5]), weighting="quadratic")

    assert (round(result.pa, 7), round(result.pe, 7)) == (0.9753788, 0.7137044)
    assert (round(result.value, 3), round(result.se_units, 5)) == (0.914, 0.10396)
    assert (round(result.ci_units[0], 3), result.ci_units[1]) == (0.685, 1.0)


def test_irrcac_ac2_linear_of_raw4raters_from_the_python_port():
    result = gwet_ac(counts_from_matrix(RAW_4_RATERS, [1, 2, 3, 4, 5]), weighting="linear")

    assert (round(result.pa, 3), round(result.pe, 3), round(result.value, 3)) == (0.939, 0.571, 0.859)
    assert (round(result.se_units, 3), round(result.ci_units[0], 3), result.ci_units[1]) == (0.117, 0.600, 1.0)


@pytest.mark.parametrize(
    ("weighting", "published"),
    [
        ("unweighted", (0.4448007, 0.08418757, 0.264, 0.625, 0.5511111, 0.1914815)),
        ("quadratic", (0.4837438, 0.1058227, 0.257, 0.711, 0.8544444, 0.7180556)),
    ],
)
def test_irrcac_distribution_of_six_raters(weighting, published):
    value, se, low, high, pa, pe = published

    result = gwet_ac(DISTRIB_6_RATERS, weighting=weighting)

    assert round(result.value, 7) == value and round(result.se_units, 7) == pytest.approx(se, abs=1e-7)
    assert (round(result.ci_units[0], 3), round(result.ci_units[1], 3)) == (low, high)
    assert (round(result.pa, 7), round(result.pe, 7)) == (pa, pe)


def test_irrcac_ac1_of_raw5observers_from_the_python_port():
    result = gwet_ac(counts_from_matrix(RAW_5_OBSERVERS, [0, 1, 2, 3]))

    assert (round(result.pa, 3), round(result.pe, 3), round(result.value, 3)) == (0.616, 0.236, 0.497)
    assert round(result.se_units, 3) == 0.122
    assert (round(result.ci_units[0], 3), round(result.ci_units[1], 3)) == (0.235, 0.758)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_matches_the_irrcac_restatement_on_random_data_with_missing_ratings(seed, weighting):
    rng = np.random.default_rng(2000 + seed)
    q = int(rng.integers(2, 5))
    matrix = rng.choice(
        q, size=(int(rng.integers(2, 9)), int(rng.integers(4, 70))), p=rng.dirichlet(np.ones(q))
    ).astype(float)
    matrix[rng.random(matrix.shape) < rng.random() * 0.6] = nan
    counts = counts_from_matrix(matrix, list(range(q)))
    result = gwet_ac(counts, weighting=weighting)
    if result.value is None:
        assert result.units_paired == 0 or (counts.sum(axis=0) > 0).sum() < 2
        return

    ac, pa, pe, se = irrcac_reference(counts, weighting)

    assert (result.value, result.pa, result.pe) == pytest.approx((ac, pa, pe), abs=1e-9)
    assert result.se_units == pytest.approx(se, abs=1e-9)
    assert result.se == pytest.approx(se, abs=1e-9)  # one unit per cluster: the same


def test_the_prevalence_paradox():
    # 200 words, 4 raters; 196 words nobody marks, on 4 words three of four mark, one does not.
    counts = np.array([[4, 0]] * 196 + [[1, 3]] * 4)

    fleiss, ac1 = fleiss_kappa(counts), gwet_ac(counts)

    assert fleiss.pa == ac1.pa == pytest.approx(0.99)  # 196 + 4 * 6/12 agreeing pairs out of 200 words
    assert fleiss.pe > 0.97 and fleiss.value < 0.67  # Fleiss' chance agreement is nearly all of it
    assert ac1.pe < 0.03 and ac1.value > 0.98


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_the_clip_bootstrap_equals_recomputing_each_resample(weighting):
    rng = np.random.default_rng(4)
    counts = rng.multinomial(5, [0.7, 0.2, 0.1], size=60)
    counts[rng.random(60) < 0.2] = rng.multinomial(3, [0.6, 0.3, 0.1], size=1)  # units with 3 ratings
    clips = np.repeat(np.arange(15), 4)
    codes, n = cluster_codes(clips)
    layout = gwet_layout(counts, weighting)

    sums = bootstrap_sums(gwet_cluster_statistics(counts, codes, n, layout), resamples=20, seed=9)

    drawn = generator(seed=9).integers(0, n, size=(20, n), dtype=np.uint32)
    for value, chosen in zip(gwet_from_sums(sums, layout)[0], drawn):
        resample = np.concatenate([counts[clips == clip] for clip in chosen])
        assert value == pytest.approx(gwet_ac(resample, weighting=weighting).value, abs=1e-12)


def test_clusters_of_one_unit_give_irrcacs_standard_error():
    counts = counts_from_matrix(RAW_5_OBSERVERS, [0, 1, 2, 3])

    result = gwet_ac(counts, clusters=np.arange(counts.shape[0]) * 3)

    assert result.se == pytest.approx(result.se_units, abs=1e-15)
    assert result.ci == pytest.approx(result.ci_units, abs=1e-15)


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_edge_cases_are_undefined_with_a_reason_never_one(weighting):
    one_category = gwet_ac(np.array([[0, 3, 0], [0, 2, 0], [0, 4, 0]]), weighting=weighting)
    one_rater_per_unit = gwet_ac(np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), weighting=weighting)
    all_missing = gwet_ac(np.zeros((4, 3), dtype=int), weighting=weighting)

    assert one_category.value is None
    assert one_category.reason.startswith("every rating is in one category (category 1)")
    for result in (one_rater_per_unit, all_missing):
        assert (result.value, result.reason) == (None, "no unit has two or more ratings")
    assert all_missing.units == 0


def test_too_few_units_or_clips_give_no_interval():
    counts = np.array([[2, 1], [3, 0], [1, 2], [0, 3], [3, 0], [2, 1]])

    result = gwet_ac(counts, clusters=[0, 0, 1, 1, 2, 2])

    assert result.value is not None and result.ci_units is not None  # six words
    assert result.ci is None
    assert result.ci_reason == f"too few clips for an interval: 3 (needs at least {MIN_UNITS})"
