"""Fleiss' kappa and its standard error against published values, statsmodels and the bootstrap. No database.

Published values used:
- Fleiss (1971), Table 1: 30 patients, 6 psychiatrists, 5 diagnoses, kappa = 0.430 (the data are
  statsmodels' `diagnoses` and R irr's `diagnoses`).
- R irr 0.84, kappam.fleiss(diagnoses): "Kappa = 0.43, z = 17.7" -- z is kappa over the standard
  error under the null hypothesis kappa = 0 (Fleiss, Nee & Landis 1979), which we must NOT use.
- irrCAC (K. Gwet's R package, README "Computing agreement coefficients from raw ratings"),
  fleiss.kappa.raw(cac.raw4raters): pa 0.8181818, pe 0.2387153, coeff 0.76117, se 0.15302,
  conf.int (0.424, 1). cac.raw4raters is Gwet (2014) Handbook p. 120, 12 units, 4 raters, missing values.
- irrCAC's Python port (afergadis/irrCAC, test/unit/irrCAC/raw/test_fleiss.py), raw_5observers
  (Gwet 2014, p. 125): pa 0.616, pe 0.291, kappa 0.458, se 0.120, interval (0.199, 0.716).
"""

import math

import numpy as np
import pytest
from scipy.stats import t as student_t
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from evaluation.stats.fleiss import fleiss_cluster_statistics, fleiss_from_sums, fleiss_kappa, fleiss_layout
from evaluation.stats.ratings import counts_from_matrix
from evaluation.stats.resampling import bootstrap_sums, cluster_codes, generator

nan = np.nan
FLEISS_1971 = np.array(
    [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ]
)
RAW_4_RATERS = [  # raters x units (cac.raw4raters transposed)
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, nan],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
RAW_5_OBSERVERS = [
    [1, 1, 2, nan, 0, 0, 1, 1, 2, 2, nan, 0, 1, 3, 1],
    [1, 1, 3, 0, 0, 0, 0, nan, 2, 1, 1, 0, 2, 3, 1],
    [2, 0, 3, 0, 0, 0, 2, 2, 2, 1, 0, 0, 2, 2, 1],
    [nan, 1, 3, nan, nan, nan, nan, 0, nan, 1, 0, 0, 2, 2, nan],
    [2, nan, nan, 0, 0, 0, 1, nan, 2, nan, nan, nan, nan, 3, 1],
]


def test_fleiss_1971_example():
    counts, _ = aggregate_raters(FLEISS_1971)

    result = fleiss_kappa(counts)

    assert round(result.value, 3) == 0.430
    assert result.value == pytest.approx(statsmodels_fleiss(counts), abs=1e-12)


def test_irrcac_raw4raters_kappa_standard_error_and_interval():
    result = fleiss_kappa(counts_from_matrix(RAW_4_RATERS, [1, 2, 3, 4, 5]))

    assert result.pa == pytest.approx(0.8181818, abs=5e-8)
    assert result.pe == pytest.approx(0.2387153, abs=5e-8)
    assert round(result.value, 5) == 0.76117
    assert round(result.se_units, 5) == 0.15302
    assert (round(result.ci_units[0], 3), result.ci_units[1]) == (0.424, 1.0)
    assert (result.units, result.units_paired) == (12, 11)


def test_irrcac_raw5observers_standard_error_and_interval():
    result = fleiss_kappa(counts_from_matrix(RAW_5_OBSERVERS, [0, 1, 2, 3]))

    assert (round(result.pa, 3), round(result.pe, 3), round(result.value, 3)) == (0.616, 0.291, 0.458)
    assert round(result.se_units, 3) == 0.120
    assert (round(result.ci_units[0], 3), round(result.ci_units[1], 3)) == (0.199, 0.716)


def test_the_standard_error_is_not_the_one_under_the_null_hypothesis():
    counts, _ = aggregate_raters(FLEISS_1971)
    subjects, raters = counts.shape[0], 6
    p = counts.sum(axis=0) / (subjects * raters)
    q = 1 - p
    # Fleiss, Nee & Landis (1979): the variance of kappa when kappa = 0 -- what irr's z uses.
    null_variance = (
        2 / ((p * q).sum() ** 2 * subjects * raters * (raters - 1)) * ((p * q).sum() ** 2 - (p * q * (q - p)).sum())
    )

    result = fleiss_kappa(counts)

    assert round(result.value / math.sqrt(null_variance), 1) == 17.7  # irr reproduces: z = 17.7
    assert result.se > 2 * math.sqrt(null_variance)  # the null one is over twice too small here


def gwet_reference(counts):
    """irrCAC's fleiss.kappa.raw (unweighted), transliterated unit by unit: an independent check."""
    counts = [list(map(int, row)) for row in counts if sum(row) > 0]
    n, q = len(counts), len(counts[0])
    r = [sum(row) for row in counts]
    n2 = sum(1 for x in r if x >= 2)
    pa = sum(sum(c * (c - 1) for c in row) / (x * (x - 1)) for row, x in zip(counts, r) if x >= 2) / n2
    pi = [sum(row[k] / x for row, x in zip(counts, r)) / n for k in range(q)]
    pe = sum(p * p for p in pi)
    kappa = (pa - pe) / (1 - pe)
    linear = []
    for row, x in zip(counts, r):
        pa_i = sum(c * (c - 1) for c in row) / (x * (x - 1)) if x >= 2 else 0.0
        kappa_i = (n / n2) * (pa_i - pe * (x >= 2)) / (1 - pe)
        pe_i = sum(c * p for c, p in zip(row, pi)) / x
        linear.append(kappa_i - 2 * (1 - kappa) * (pe_i - pe) / (1 - pe))
    se = math.sqrt(sum((v - kappa) ** 2 for v in linear) / (n * (n - 1)))
    return kappa, se


@pytest.mark.parametrize("seed", range(30))
def test_equal_raters_match_statsmodels(seed):
    rng = np.random.default_rng(seed)
    raters, categories = int(rng.integers(2, 12)), int(rng.integers(2, 5))
    ratings = rng.choice(categories, size=(int(rng.integers(5, 80)), raters), p=rng.dirichlet(np.ones(categories)))
    counts, _ = aggregate_raters(ratings, n_cat=categories)
    if (counts.sum(axis=0) > 0).sum() < 2:
        assert fleiss_kappa(counts).value is None
        return

    assert fleiss_kappa(counts).value == pytest.approx(statsmodels_fleiss(counts), abs=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_unequal_raters_match_the_unit_by_unit_formula(seed):
    rng = np.random.default_rng(100 + seed)
    matrix = rng.choice(3, size=(int(rng.integers(2, 9)), int(rng.integers(4, 60)))).astype(float)
    matrix[rng.random(matrix.shape) < rng.random() * 0.6] = nan
    counts = counts_from_matrix(matrix, [0, 1, 2])
    result = fleiss_kappa(counts)
    if result.value is None:
        assert result.units_paired == 0 or (counts.sum(axis=0) > 0).sum() < 2
        return

    kappa, se = gwet_reference(counts)

    assert result.value == pytest.approx(kappa, abs=1e-9)
    assert result.se_units == pytest.approx(se, abs=1e-9)
    assert result.se == pytest.approx(se, abs=1e-9)  # one unit per cluster: the same


def test_a_clustered_se_on_singleton_clusters_is_gwets():
    counts = counts_from_matrix(RAW_5_OBSERVERS, [0, 1, 2, 3])

    result = fleiss_kappa(counts, clusters=np.arange(counts.shape[0]) * 7)

    assert result.se == pytest.approx(result.se_units, abs=1e-15)
    assert result.ci == pytest.approx(result.ci_units, abs=1e-15)


def clustered_data(seed: int, clips: int = 300, words: int = 12, raters: int = 8, spread: float = 1.0):
    """Binary ratings where how much raters agree varies from clip to clip: words of a clip are alike."""
    rng = np.random.default_rng(seed)
    noise = rng.lognormal(0.0, spread, size=clips)  # a clip's noise: some clips easy, some hard
    truth = rng.random((clips, words)) < 0.2
    seen = truth[:, :, None] * 1.0 + rng.normal(0, 1, size=(clips, words, raters)) * noise[:, None, None] * 0.5
    marked = (seen > 0.5).reshape(clips * words, raters)
    counts = np.stack([(~marked).sum(axis=1), marked.sum(axis=1)], axis=1)
    return counts, np.repeat(np.arange(clips), words)


def bootstrap_sd(counts, clusters, resamples=2000, seed=0):
    codes, n = cluster_codes(clusters)
    layout = fleiss_layout(counts)
    sums = bootstrap_sums(fleiss_cluster_statistics(counts, codes, n, layout), resamples=resamples, seed=seed)
    return float(np.std(fleiss_from_sums(sums, layout)[0], ddof=1))


@pytest.mark.parametrize("seed", range(3))
def test_clustered_se_agrees_with_the_clip_bootstrap_and_the_word_level_one_is_too_narrow(seed):
    counts, clusters = clustered_data(seed)

    result = fleiss_kappa(counts, clusters)
    sd = bootstrap_sd(counts, clusters)

    assert result.se == pytest.approx(sd, rel=0.12)
    assert result.se_units < 0.8 * sd


def test_word_level_se_agrees_with_the_bootstrap_when_words_are_independent():
    counts, _ = clustered_data(11, clips=3000, words=1, spread=0.6)
    units = np.arange(counts.shape[0])

    result = fleiss_kappa(counts)

    assert result.se_units == pytest.approx(bootstrap_sd(counts, units), rel=0.12)


def test_bootstrap_sums_equal_recomputing_each_resample():
    counts, clusters = clustered_data(5, clips=40, words=5)
    codes, n = cluster_codes(clusters)
    layout = fleiss_layout(counts)
    sums = bootstrap_sums(fleiss_cluster_statistics(counts, codes, n, layout), resamples=20, seed=9)
    drawn = generator(seed=9).integers(0, n, size=(20, n), dtype=np.uint32)

    for row, clips in zip(fleiss_from_sums(sums, layout)[0], drawn):
        resample = np.concatenate([counts[clusters == clip] for clip in clips])
        assert row == pytest.approx(fleiss_kappa(resample).value, abs=1e-12)


def test_t_interval_with_clips_minus_one_degrees_of_freedom():
    counts, clusters = clustered_data(2, clips=20)

    result = fleiss_kappa(counts, clusters)

    half = student_t.ppf(0.975, 19) * result.se
    assert result.ci == pytest.approx((result.value - half, result.value + half), abs=1e-12)


def test_every_rating_in_one_category_is_undefined_not_one():
    result = fleiss_kappa(np.array([[3, 0], [3, 0], [2, 0]]))

    assert result.value is None
    assert result.reason.startswith("every rating is in one category")


def test_no_unit_with_two_ratings_is_undefined():
    result = fleiss_kappa(np.array([[1, 0], [0, 1], [0, 0]]))

    assert (result.value, result.units, result.units_paired) == (None, 2, 0)
    assert result.reason == "no unit has two or more ratings"


def test_one_unit_has_a_kappa_but_no_standard_error():
    result = fleiss_kappa(np.array([[2, 1]]))

    assert result.value is not None
    assert (result.se, result.ci, result.se_units, result.ci_units) == (None, None, None, None)
