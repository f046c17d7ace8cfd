"""How sure the study designer (evaluation.stats.study_designer) is of its kappa widths: their
calibration to a pilot's own kappa error (design_check.pilot_kappas), the check that the designer's
crowd changes with the number of listeners as the pilot's does, and the uncertainty a pilot leaves
(its kappa error's noise, the spread over its resamples). Pure numpy and scipy.

The figures come from the designer's simulations: each replicate's kappa error (the two-way
jackknife of evaluation.stats.kappa_jackknife, which tracked the spread of kappa over fresh crowds
within 12 % on every harness crowd tried, where the linearized error clustered by clip and listener
gave 0.55 to 0.7 of it with a few listeners marking every word), and the same figure of simulated
pilots run as the pilot was. Measured at full size by bench/study_designer.py.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

FIT_TOLERANCE = 0.25  # the simulated crowd's flips may be this far from the pilot's own (relative), beyond noise
HIGH_QUANTILE = 0.9  # a design meets the flip target when it does in this share of the pilot's resamples


@dataclass(frozen=True)
class MeasuredKappa:
    """The standard error of Fleiss' kappa (binary marks) at n listeners a clip, measured on the
    pilot's `clips` clips (the words of a clip as one cluster; evaluation.stats.design_check.
    measured_kappa). `listeners`: over listeners too, by a jackknife over clips and listeners (its
    listeners heard tasks of clips, as the designer's do), else each clip's listeners taken as drawn
    afresh (clustered by clip)."""

    n: int
    se: float
    clips: int
    listeners: bool = False


def kappa_check(calibrations: dict[int, dict], rows_by_n: dict[int, tuple[float, float, float]]) -> dict:
    """Each design's kappa factor and the designs whose width the designer cannot tell.

    With the pilot's error over clips and listeners (design_check.pilot_kappas), every width is
    scaled by the pilot's figure over the designer's at the pilot's k (the most listeners it
    measured, its steadiest figure): the designer's crowd need not vary as much as the pilot's
    (on an honest crowd, whose listeners' thresholds differ more than the designer's, the factor
    was 1.4), only change with the number of listeners as the pilot's does. That is the check, as
    the flips are: scaled so, the designer's error at each other n the pilot measured must be
    within FIT_TOLERANCE of the pilot's beyond noise (the factor's standard error at
    HIGH_QUANTILE). A design of N listeners goes by the check at N, or at the nearest n measured
    below (above where none is below); one of more listeners than the pilot's k also by the check
    at half of k: the model would extrapolate a trend it does not reproduce. The pilot's error
    clustered by clip alone (the older measurement) scales the widths by its own n's factor,
    unchecked.

    Besides, the designer cannot tell the widths that its uncertainty pins no closer than
    FIT_TOLERANCE on both sides in HIGH_QUANTILE of pilots (a normal band):
    - the pilot's uncertainty about its crowd (the designer's kappa errors over the pilot's
      resamples, _pilot_relative_sd): a larger pilot tells;
    - with it the factor's (one pilot's kappa error is noisy) and the designer's Monte Carlo
      error: more replicates may tell.
    The factor cancels part of the pilot's uncertainty, so their sum errs towards "cannot tell".

    `rows_by_n`: each design's uncalibrated width, its standard error and the pilot's relative
    uncertainty about it. "uncertainty": each design's relative error of its width beyond its
    Monte Carlo error (the factor's and the pilot's)."""
    annotators = sorted(rows_by_n)
    if not calibrations:
        return {
            "factors": dict.fromkeys(annotators, 1.0),
            "uncertainty": {n: rows_by_n[n][2] for n in annotators},
            "untold": set(),
            "reason": "not calibrated: no pilot",
        }
    measured = sorted(calibrations)
    top, apart = measured[-1], _apart_from_the_pilot(calibrations)
    half = min(measured, key=lambda m: abs(m - top / 2))
    # "Within FIT_TOLERANCE" is two-sided: a width told is within it in HIGH_QUANTILE of pilots.
    within = float(norm.ppf((1 + HIGH_QUANTILE) / 2))
    factors: dict[int, float] = {}
    uncertainty: dict[int, float] = {}
    untold: dict[str, list[int]] = {"unlike": [], "unsure": [], "open": []}
    for n in annotators:
        below = [m for m in measured if m <= n]
        calibration = calibrations[max(below) if below else min(measured)]
        scaling = calibrations[top] if calibration["listeners"] else calibration
        factors[n] = scaling["factor"]
        width, width_se, pilot = rows_by_n[n]
        if not (width > 0 and scaling["factor"] > 0):  # replicates all alike: no spread to scale
            uncertainty[n] = pilot
            untold["open"].append(n)
            continue
        uncertainty[n] = math.hypot(scaling["factor_se"] / scaling["factor"], pilot)
        if apart.get(calibration["n"]) or (n > top and apart.get(half)):
            untold["unlike"].append(n)
        elif not pilot * within <= FIT_TOLERANCE:
            untold["unsure"].append(n)
        elif not math.hypot(uncertainty[n], width_se / width) * within <= FIT_TOLERANCE:
            untold["open"].append(n)
    reason = _kappa_reason(untold, calibrations, apart) or (
        f"kappa widths {'checked against' if calibrations[top]['listeners'] else 'calibrated to'} the pilot's "
        f"own kappa error at {measured[0]} to {top} listeners a clip"
    )
    return {"factors": factors, "uncertainty": uncertainty, "untold": set().union(*untold.values()), "reason": reason}


def _apart_from_the_pilot(calibrations: dict[int, dict]) -> dict[int, bool]:
    """Per n measured over clips and listeners: the designer's kappa error, scaled to the pilot's at
    its k, more than FIT_TOLERANCE from the pilot's beyond noise (the factor's at n, at
    HIGH_QUANTILE)."""
    quantile = float(norm.ppf(HIGH_QUANTILE))
    top = calibrations[max(calibrations)]
    if not (top["listeners"] and top["factor"] > 0):
        return {}
    return {
        n: abs(c["factor"] / top["factor"] - 1) > FIT_TOLERANCE + quantile * c["factor_se"] / top["factor"]
        for n, c in calibrations.items()
        if c["listeners"]
    }


def _kappa_reason(untold: dict[str, list[int]], calibrations: dict[int, dict], apart: dict[int, bool]) -> str:
    """Why the designer cannot tell which widths ("" where it can tell them all)."""
    reasons = []
    if untold["unlike"]:
        top = calibrations[max(calibrations)]
        figures = "; ".join(
            f"{n} listeners: the pilot's {c['pilot_se']:.4f}, the designer's {c['designer_se'] * top['factor']:.4f}"
            for n, c in calibrations.items()
            if apart.get(n)
        )
        reasons.append(
            f"cannot tell the kappa width of {', '.join(map(str, untold['unlike']))} listeners a clip: the pilot's "
            "kappa error (over clips and listeners) does not change with the number of listeners as the designer's "
            f"crowd's does (scaled to the pilot's at {max(calibrations)} listeners: {figures}), more than "
            f"{FIT_TOLERANCE:.0%} apart beyond noise"
        )
    if untold["unsure"]:
        reasons.append(
            f"cannot tell the kappa width of {', '.join(map(str, untold['unsure']))} listeners a clip within "
            f"{FIT_TOLERANCE:.0%}: the pilot leaves the crowd's make-up too open (a larger pilot may tell)"
        )
    if untold["open"]:
        reasons.append(
            f"cannot tell the kappa width of {', '.join(map(str, untold['open']))} listeners a clip within "
            f"{FIT_TOLERANCE:.0%}: the designer's replicates and the pilot's kappa error leave it more open "
            "(more replicates may tell)"
        )
    return "; ".join(reasons)


def kappa_calibration(measured: MeasuredKappa | None, simulated: np.ndarray, pairs: np.ndarray) -> dict:
    """The pilot's standard error of kappa over the designer's for the pilot as measured: the factor
    every kappa width is scaled by (1 without a measurement). `simulated`: the simulated pilots'
    errors over clips and listeners (their mean) where the pilot's is, else their kappas
    (their spread within resamples)."""
    if measured is None or not np.isfinite(measured.se) or measured.se <= 0:
        return {}
    finite = np.isfinite(simulated)
    if measured.listeners:
        values = simulated[finite]
        ours, df = (float(values.mean()), values.size - 1) if values.size > 1 else (float("nan"), 0)
        if df < 1 or not ours > 0:
            return {}
        # One pilot's error is as noisy as one simulated pilot's (their spread), the designer's mean
        # of them much less.
        spread = float(values.std(ddof=1)) / ours
        relative = math.hypot(spread, spread / math.sqrt(values.size))
    else:
        ours, df = within_sd(simulated[finite], pairs[finite])
        if df < 1 or not ours > 0:
            return {}
        # The designer's standard deviation's noise (df) and the pilot's standard error's (taken as a
        # standard deviation's over its clips).
        relative = math.hypot(1 / math.sqrt(2 * df), 1 / math.sqrt(2 * max(measured.clips - 1, 1)))
    return {"n": measured.n, "clips": measured.clips, "listeners": measured.listeners, "pilot_se": measured.se,
            "designer_se": ours, "factor": measured.se / ours, "factor_se": relative * measured.se / ours}  # fmt: skip


def within_sd(values: np.ndarray, pairs: np.ndarray) -> tuple[float, int]:
    """The standard deviation of a statistic among replicates under the same assumptions (pooled
    within resamples: the study's sampling error, not the pilot's uncertainty), and its degrees of
    freedom."""
    groups, group_of = np.unique(pairs, return_inverse=True)
    df = values.size - groups.size
    if df < 1:
        return float("nan"), 0
    means = np.bincount(group_of, values) / np.bincount(group_of)
    return float(math.sqrt(np.sum((values - means[group_of]) ** 2) / df)), df


def pilot_relative_sd(statistics: list[np.ndarray], pairs: np.ndarray) -> float:
    """The relative standard deviation of statistics over the pilot's resamples (`pairs`: each
    replicate's), less what the replicates' own noise adds to their means under each (_band's
    arithmetic), pooled over the statistics as variances; 0 without resamples."""
    variances = []
    for values in statistics:
        finite = np.isfinite(values)
        if finite.sum() and values[finite].mean() > 0:
            variances.append(pilot_variance(values[finite], pairs[finite]) / float(values[finite].mean()) ** 2)
    return math.sqrt(max(0.0, float(np.mean(variances)))) if variances else 0.0


def pilot_sd(values: np.ndarray, pairs: np.ndarray) -> float:
    """The standard deviation of a statistic's means under each of the pilot's resamples, less
    the replicates' own noise in them (the spread within resamples); 0 with fewer than two."""
    return math.sqrt(max(0.0, pilot_variance(values, pairs)))


def pilot_variance(values: np.ndarray, pairs: np.ndarray) -> float:
    """The variance of a statistic's means under each of the pilot's resamples less the replicates'
    own noise in them (the spread within resamples): negative where that noise is most of it; 0
    with fewer than two resamples."""
    groups, group_of = np.unique(pairs, return_inverse=True)
    within, df = within_sd(values, pairs)
    if groups.size < 2 or df < 1:
        return 0.0
    size = np.bincount(group_of)
    means = np.bincount(group_of, values) / size
    return float(means.var(ddof=1)) - within**2 * float(np.mean(1 / size))
