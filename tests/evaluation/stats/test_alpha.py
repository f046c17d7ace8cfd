"""Krippendorff's alpha against published values and the krippendorff package, and its clip bootstrap.

Published values used:
- Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 coders x 12 units
  with missing values: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797. The same matrix is the example
  of R irr's kripp.alpha ("nmm") and of the krippendorff package's docstring.
- irrCAC README, krippen.alpha.raw(cac.raw4raters) (the same data, rows for units): 0.74342.
- The krippendorff package docstring's 3 coders x 15 units example: nominal 0.691358, interval 0.810845.
"""

import krippendorff
import numpy as np
import pytest

from evaluation.stats.alpha import METRICS, alpha, alpha_cluster_statistics, alpha_from_sums, alpha_layout
from evaluation.stats.ratings import Ratings, counts_from_matrix
from evaluation.stats.resampling import bootstrap_sums, cluster_codes, generator

nan = np.nan
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
PACKAGE_EXAMPLE = [
    [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
    [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
    [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
]


@pytest.mark.parametrize(
    ("metric", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_2011_example_with_missing_values(metric, published):
    counts = counts_from_matrix(KRIPPENDORFF_2011, [1, 2, 3, 4, 5])

    result = alpha(counts, metric, values=[1, 2, 3, 4, 5])

    assert round(result.value, 3) == published
    assert result.pairable_values == 40  # unit 12 has one value only


def test_irrcac_gives_the_same_nominal_alpha():
    assert round(alpha(counts_from_matrix(KRIPPENDORFF_2011, [1, 2, 3, 4, 5]), "nominal").value, 5) == 0.74342


@pytest.mark.parametrize(("metric", "published"), [("nominal", 0.691358), ("interval", 0.810845)])
def test_the_krippendorff_package_docstring_example(metric, published):
    counts = counts_from_matrix(PACKAGE_EXAMPLE, [1, 2, 3, 4])

    assert round(alpha(counts, metric, values=[1, 2, 3, 4]).value, 6) == published


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("metric", METRICS)
def test_matches_the_krippendorff_package_on_random_data_with_missing_values(seed, metric):
    rng = np.random.default_rng(seed)
    matrix = rng.choice(
        3, size=(int(rng.integers(2, 10)), int(rng.integers(3, 80))), p=rng.dirichlet(np.ones(3))
    ).astype(float)
    matrix[rng.random(matrix.shape) < rng.random() * 0.5] = nan
    counts = counts_from_matrix(matrix, [0, 1, 2])
    ours = alpha(counts, metric)
    pairable = counts[counts.sum(axis=1) >= 2]
    if ours.value is None:
        assert pairable.size == 0 or (pairable.sum(axis=0) > 0).sum() < 2
        return

    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=metric, value_domain=[0, 1, 2])

    assert ours.value == pytest.approx(expected, abs=1e-9)


def test_the_ordinal_metric_is_krippendorffs_not_an_integer_weighting():
    counts = counts_from_matrix(KRIPPENDORFF_2011, [1, 2, 3, 4, 5])
    ordinal = alpha(counts, "ordinal").value

    assert ordinal != pytest.approx(alpha(counts, "interval").value, abs=1e-3)
    # moving the categories apart changes interval alpha but not the ordinal one (only ranks count)
    assert alpha(counts, "ordinal", values=[1, 2, 3, 10, 50]).value == ordinal
    assert alpha(counts, "interval", values=[1, 2, 3, 10, 50]).value != pytest.approx(alpha(counts, "interval").value)


def test_all_values_in_one_category_is_undefined_not_one():
    result = alpha(np.array([[0, 3, 0], [0, 2, 0]]), "ordinal")

    assert result.value is None
    assert "expected disagreement is 0" in result.reason


def test_no_unit_with_two_values_is_undefined():
    result = alpha(np.array([[1, 0, 0], [0, 1, 0]]), "nominal")

    assert (result.value, result.reason) == (None, "no unit has two or more values")


def test_an_unknown_metric_is_refused():
    counts = np.array([[1, 1, 0]])
    with pytest.raises(ValueError, match="metric"):
        alpha_from_sums(np.zeros((1, 9)), alpha_layout(counts), "circular")


def test_the_ratio_metric_by_hand():
    # Units (1, 2), (0, 0), (2, 2): coincidences o_12 = o_21 = 1, o_00 = 2, o_22 = 2; n_0, n_1, n_2 = 2, 1, 3.
    # Ratio distances d_01 = d_02 = 1, d_12 = (1/3)^2 = 1/9: sum o d = 2/9, sum n_c n_k d = 2 (2 + 6 + 3/9) = 50/3,
    # alpha = 1 - (6 - 1) (2/9) / (50/3) = 14/15.
    counts = counts_from_matrix([[1, 0, 2], [2, 0, 2]], [0, 1, 2])

    assert alpha(counts, "ratio").value == pytest.approx(14 / 15, abs=1e-12)
    # Only ratios count: the scalar scores 0, 0.5, 1 give the alpha of the levels 0, 1, 2.
    assert alpha(counts, "ratio", values=[0, 0.5, 1]).value == pytest.approx(14 / 15, abs=1e-12)
    with pytest.raises(ValueError, match="not negative"):
        alpha(counts, "ratio", values=[-1, 0, 1])


@pytest.mark.parametrize("metric", METRICS)
def test_edge_cases_are_undefined_with_a_reason_never_one(metric):
    one_category = alpha(counts_from_matrix([[2, 2, 2], [2, 2, nan]], [0, 1, 2]), metric)
    single_rater = alpha(counts_from_matrix([[0, 1, nan], [nan, nan, 2]], [0, 1, 2]), metric)
    all_missing = alpha(counts_from_matrix([[nan, nan], [nan, nan]], [0, 1, 2]), metric)

    assert one_category.value is None and "one category" in one_category.reason
    assert (single_rater.value, single_rater.reason) == (None, "no unit has two or more values")
    assert (all_missing.value, all_missing.reason) == (None, "no unit has two or more values")


def simulated_clips(seed: int, clips: int = 30):
    rng = np.random.default_rng(seed)
    rows, words = [], rng.integers(3, 9, size=clips)
    for clip in range(clips):
        for annotator in rng.choice(12, size=int(rng.integers(2, 7)), replace=False):
            rows.append((clip, annotator, rng.choice(3, size=words[clip], p=[0.7, 0.2, 0.1])))
    levels = np.full((len(rows), words.max()), -1)
    for i, (_, _, values) in enumerate(rows):
        levels[i, : len(values)] = values
    return Ratings.build(clip=[r[0] for r in rows], annotator=[r[1] for r in rows], levels=levels, clip_words=words)


@pytest.mark.parametrize("metric", METRICS)
def test_the_clip_bootstrap_equals_calling_the_package_on_each_resample(metric):
    counts, unit_clip = simulated_clips(3).unit_counts()
    codes, clusters = cluster_codes(unit_clip)
    layout = alpha_layout(counts)
    per_clip = alpha_cluster_statistics(counts, codes, clusters, layout)

    sums = bootstrap_sums(per_clip, resamples=25, seed=4)
    fast = alpha_from_sums(sums, layout, metric)

    drawn = generator(seed=4).integers(0, clusters, size=(25, clusters), dtype=np.uint32)
    for value, clips in zip(fast, drawn):
        resample = np.concatenate([counts[unit_clip == clip] for clip in clips])
        expected = krippendorff.alpha(value_counts=resample, level_of_measurement=metric, value_domain=[0, 1, 2])
        assert value == pytest.approx(expected, abs=1e-9)


def test_point_alpha_is_the_sum_of_the_per_clip_statistics():
    counts, unit_clip = simulated_clips(8).unit_counts()
    codes, clusters = cluster_codes(unit_clip)
    layout = alpha_layout(counts)

    totals = alpha_cluster_statistics(counts, codes, clusters, layout).sum(axis=0)

    for metric in METRICS:
        assert alpha_from_sums(totals, layout, metric)[0] == pytest.approx(alpha(counts, metric).value, abs=1e-12)
