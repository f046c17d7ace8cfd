"""The study designer: before a study, what 3 to 15 annotators a clip would give, fixed, with exact
stopping and with probabilistic stopping, by Monte Carlo. Pure numpy and scipy; no Django.

The crowd is simulated from assumptions (`DesignAssumptions`), given or estimated from a pilot (a
study's own first annotations, evaluation.stats.pilot_assumptions.assumptions_from_pilot):

- a word is truly emphasized with probability `emphasis_rate`;
- each word has its own marking probability p_w (what share of honest listeners would mark it):
  Beta with mean `accuracy` for an emphasized word and 1 - `accuracy` for the others, and an
  intra-word correlation `heterogeneity` (rho = 1 / (a + b + 1)): words are not all equally
  clear, which is what makes some clips contested;
- an honest annotator marks a word with probability p_w, a spammer (a share `spammers` of the
  annotations) with the crowd's overall marking rate whatever the word; a mark is heavy (level 2)
  with probability `heavy_share` on an emphasized word and a third of it on the others.

Listeners are people: each hears a task of `clips_per_task` clips, and their kind (spammer or
honest), a spammer's rate and an honest listener's own shift (`listener_spread`) hold over it, so
that which listeners a study draws moves its figures as in a real study. From a pilot, besides,
the words' chances are not the two Beta classes: the joint chance of an honest and of a spammer
mark comes from the pilot by nonparametric maximum likelihood (`word_chances`), simulated clips
are the pilot's clips drawn again (`pilot_clips`), and design_study takes the pilot's resamples
(its uncertainty), its own flips (a check: the designer says when it cannot tell) and its own
kappa error at each number of listeners, clustered by clip and by listener (a check of the
widths: the designer says when it cannot tell them); evaluation.stats.design_check computes them.

For each design (N annotators a clip; fixed; exact stopping: a clip stops once every word's binary
label is decided, m > N/2 or m + (N - k) <= N/2; or probabilistic stopping, `ProbabilisticStopping`:
a clip stops once it has at least `minimum` annotations and, for every word, the probability that N
would give another binary label than the k so far is below `epsilon`, under the beta-binomial
predictive with a prior fitted to the replicate's mark counts at the first `minimum` annotations of
every clip, as bench/adaptive.py and the live studies' rule, evaluation.stats.stopping) each
replicate study of `simulated_clips` clips is annotated, and the designer reports:

- the expected width of the 95 % interval of Fleiss' kappa (binary marks) and of Krippendorff's
  ordinal alpha (three levels): 2 x 1.96 x the standard deviation of the statistic across the
  replicates, scaled to the study's clips by sqrt(simulated clips / clips) (the statistics'
  sampling error goes as one over the root of the clips);
- the share of words whose binary label would flip with one more listener (the design's label, the
  majority of the annotations a clip got, against that of the first N + 1 listeners). Exact
  stopping gives the labels of the fixed design, so the share is the fixed design's;
- the share of words whose binary label differs from the fixed design's of the same N (the
  differing share): 0 for fixed and exact stopping, about epsilon a stopped word at most for
  probabilistic stopping, whose savings buy it;
- the annotations a clip (fewer with stopping), participant-hours (each annotation takes
  `seconds_per_audio_second` x the clip's duration) and the cost at `hourly_rate`.

The recommendation is the cheapest design that meets the targets; a probabilistic design meets them
only if, besides, its differing share is at most a tenth of the flip target (`DIFFERING_OF_FLIP`):
the labels it changes are then few beside those one more listener would change in any design, and
a rule whose predictive misjudges the crowd (more changes than epsilon promises) is not chosen.

Every figure comes with its Monte Carlo standard error (over replicates; for a width, the standard
error of a standard deviation, s / sqrt(2 (R - 1))). Replicates reuse the same simulated listeners
for every N (common random numbers), so that differences between designs are not noise.
"""

import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np
from scipy.stats import norm

from evaluation.stats.alpha import alpha
from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.kappa_jackknife import two_way_jackknife_se
from evaluation.stats.kappa_widths import (
    FIT_TOLERANCE,
    HIGH_QUANTILE,
    MeasuredKappa,
    kappa_calibration,
    kappa_check,
    pilot_relative_sd,
    pilot_sd,
    within_sd,
)
from evaluation.stats.stopping import BetaBinomialPredictive, beta_prior_fit, decided, flip_probabilities

ANNOTATORS = tuple(range(3, 16))
MODES = ("fixed", "exact", "probabilistic")
Z95 = 1.959964
DIFFERING_OF_FLIP = 0.1  # a probabilistic design may change at most this share of the flip target's labels
ANCHOR_SIMULATIONS = 3  # simulations of the pilot as measured, per replicate (the kappa calibration's noise)


@dataclass(frozen=True)
class DesignAssumptions:
    emphasis_rate: float = 0.15
    accuracy: float = 0.85  # an honest listener's mean chance of marking the word's true label
    spammers: float = 0.0  # share of annotations by annotators who mark at random
    heterogeneity: float = 0.25  # intra-word correlation of marks: 0 every word equally clear
    heavy_share: float = 0.35  # of the marks on an emphasized word, the share at level 2
    clips_per_task: int = 20  # clips a listener hears: their behaviour holds over all of them
    listener_spread: float = 0.0  # sd of honest listeners' own shifts of a word's marking chance (logit)
    # The pilot's spammers, each (their marking rate, their share of marks at level 2): a simulated
    # spammer is one of them; none: a spammer marks at the crowd's overall rate.
    spammer_profiles: tuple[tuple[float, float], ...] = ()
    # From a pilot: the joint distribution of a word's chance of a mark by an honest listener and by
    # a spammer, as (honest chance, spammer chance, weight) points (_word_chances); none: the two
    # classes of emphasis_rate, accuracy and heterogeneity, and spammers marking any word alike.
    word_chances: tuple[tuple[float, float, float], ...] = ()
    # With word_chances: the pilot's clips, each the kinds of its words, and each kind's posterior
    # over the word_chances points (the last: a word the pilot says nothing of); simulated clips
    # are the pilot's clips drawn again, each word's chances drawn from its posterior.
    pilot_clips: tuple[tuple[int, ...], ...] = ()
    word_posteriors: tuple[tuple[float, ...], ...] = ()
    words_per_clip: int = 15
    clips: int = 1000
    durations: tuple[float, ...] = (5.0,)  # seconds of audio, one a clip (or one for all)
    seconds_per_audio_second: float = 4.0  # an annotation's time, per second of the clip's audio
    hourly_rate: float = 15.0
    source: str = "assumptions"  # or "pilot of <study>: <n> annotations"

    def __post_init__(self):
        for name in ("emphasis_rate", "spammers", "heavy_share"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be between 0 and 1")
        if not 0.5 < self.accuracy < 1:
            raise ValueError("accuracy must be above 0.5 (better than chance) and below 1")
        if not 0 < self.heterogeneity < 1:
            raise ValueError("heterogeneity must be between 0 and 1 (exclusive)")
        if self.words_per_clip < 1 or self.clips < 1:
            raise ValueError("a study needs at least one clip of at least one word")
        if not self.durations or min(self.durations) <= 0 or self.seconds_per_audio_second <= 0:
            raise ValueError("durations and seconds per audio second must be positive")
        if self.hourly_rate < 0:
            raise ValueError("the hourly rate cannot be negative")
        if self.clips_per_task < 1:
            raise ValueError("a listener hears at least one clip (clips_per_task)")
        if not 0 <= self.listener_spread <= 5:
            raise ValueError("listener_spread must be between 0 and 5 (logit units)")
        if self.word_chances and (
            any(not (0 <= honest <= 1 and 0 <= spam <= 1) or weight < 0 for honest, spam, weight in self.word_chances)
            or not math.isclose(sum(point[2] for point in self.word_chances), 1, abs_tol=1e-6)
        ):
            raise ValueError(
                "word_chances are (honest chance, spammer chance, weight) points, chances between 0 and 1 and "
                "weights adding up to 1"
            )
        if any(not (0 <= rate <= 1 and 0 <= heavy <= 1) for rate, heavy in self.spammer_profiles):
            raise ValueError("a spammer profile is a marking rate and a level-2 share, both between 0 and 1")

    def as_dict(self) -> dict:
        values = asdict(self)
        values["durations"] = {"clips": len(self.durations), "mean_seconds": round(float(np.mean(self.durations)), 3)}
        rates = [rate for rate, _ in self.spammer_profiles]
        values["word_chances"] = {"points": len(self.word_chances)}
        values["pilot_clips"] = {"clips": len(self.pilot_clips)}
        values["word_posteriors"] = {"kinds": len(self.word_posteriors)}
        values["spammer_profiles"] = {
            "listeners": len(rates),
            "mean_rate": round(float(np.mean(rates)), 4) if rates else None,
        }
        return values

    @property
    def audio_seconds(self) -> float:
        """Seconds of audio in the whole study (each clip once)."""
        if len(self.durations) == self.clips:
            return float(np.sum(self.durations))
        return float(np.mean(self.durations)) * self.clips


@dataclass(frozen=True)
class Targets:
    kappa_width: float = 0.1  # the widest 95 % interval of Fleiss' kappa the study accepts
    flip_share: float = 0.02  # the largest share of labels that one more listener may flip


@dataclass(frozen=True)
class ProbabilisticStopping:
    """The probabilistic rule's settings, as a study's (annotation.models.Study adaptive_epsilon and
    adaptive_min_annotators, with the same bounds)."""

    epsilon: float = 0.02  # stop when every word's chance of another label at N is below this
    minimum: int = 3  # fewest annotations a clip gets before it may stop

    def __post_init__(self):
        if not 0.0001 <= self.epsilon <= 0.5:
            raise ValueError("epsilon must be between 0.0001 and 0.5")
        if isinstance(self.minimum, bool) or int(self.minimum) != self.minimum or self.minimum < 1:
            raise ValueError("minimum must be a whole number of annotations, at least 1")


@dataclass(frozen=True)
class DesignRow:
    annotators: int
    mode: str
    kappa: float
    kappa_width: float
    kappa_width_se: float  # the simulation's error, and from a pilot the calibration's and its crowd's (kappa_check)
    alpha_ordinal: float
    alpha_width: float
    alpha_width_se: float
    flip_share: float
    flip_share_se: float
    flip_share_low: float  # 1 - HIGH_QUANTILE of the flip share over the pilot's resamples (flip_share without)
    flip_share_high: float  # HIGH_QUANTILE of it: the pilot's uncertainty (and the replicates' noise)
    differing_share: float  # words whose binary label differs from the fixed design's of the same N
    differing_share_se: float
    annotations_per_clip: float
    annotations_per_clip_se: float
    participant_hours: float
    cost: float
    meets_targets: bool = False
    # The pilot pins the flip share within FIT_TOLERANCE (its band inside point / 1.25 to point x 1.25)
    # and the designer's crowd flips the pilot's labels as the pilot does (Design.check).
    can_tell: bool = True
    # The designer's crowd gives the pilot's own kappa error (at the design's listeners, or the
    # nearest the pilot has) and its replicates pin the width within FIT_TOLERANCE (kappa_check).
    kappa_can_tell: bool = True


@dataclass(frozen=True)
class MeasuredFlips:
    """The share of labels one more listener flips at n listeners a clip, measured on the pilot
    itself (evaluation.stats.design_check.measured_flips)."""

    n: int
    share: float
    se: float
    clips: int


@dataclass(frozen=True)
class Design:
    assumptions: DesignAssumptions
    targets: Targets
    replicates: int
    simulated_clips: int
    seed: int
    rows: list[DesignRow]
    recommendation: dict = field(default_factory=dict)
    probabilistic: ProbabilisticStopping = ProbabilisticStopping()
    check: dict = field(default_factory=dict)  # can the designer tell? (the pilot's own flips against its crowd's)
    resamples: int = 0  # the pilot's resampled assumptions its replicates were simulated under

    def as_dict(self) -> dict:
        return {
            "assumptions": self.assumptions.as_dict(),
            "targets": asdict(self.targets),
            "probabilistic": asdict(self.probabilistic),
            "replicates": self.replicates,
            "simulated_clips": self.simulated_clips,
            "seed": self.seed,
            "rows": [asdict(row) for row in self.rows],
            "recommendation": self.recommendation,
            "check": self.check,
            "resamples": self.resamples,
        }


def design_study(
    assumptions: DesignAssumptions,
    *,
    targets: Targets = Targets(),
    annotators: tuple[int, ...] = ANNOTATORS,
    modes: tuple[str, ...] = MODES,
    probabilistic: ProbabilisticStopping = ProbabilisticStopping(),
    replicates: int = 20,
    simulated_clips: int = 200,
    seed: int = 0,
    measured: tuple[MeasuredFlips, ...] = (),
    resamples: tuple[DesignAssumptions, ...] = (),
    measured_kappa: MeasuredKappa | None = None,
) -> Design:
    """Every design of `annotators` x `modes`, with the cheapest that meets `targets` recommended;
    `probabilistic` sets the probabilistic designs' rule.

    From a pilot: `resamples` (evaluation.stats.design_check.pilot_resamples), the assumptions
    estimated again from resampled listeners: replicates go in pairs, each pair under the next
    resample, so that the flip shares carry the pilot's uncertainty (a design meets the flip target
    only at HIGH_QUANTILE of the resamples). Each kappa width is the mean of the replicates' own
    kappa errors (kappa_jackknife, over clips and listeners), the study's sampling error; its
    spread over the resamples is the pilot's uncertainty about it. `measured`: the pilot's own
    flips (design_check.
    pilot_measurements); where the simulated crowd's differ by more than FIT_TOLERANCE beyond
    their noise, the designer says it cannot tell and recommends no design as meeting the targets.
    `measured_kappa`: the pilot's own standard error of kappa, one (MeasuredKappa) or one for each
    n it has (design_check.pilot_kappas); the designer simulates the pilot as it was measured (its
    clips, n listeners a clip; listeners over tasks where the pilot's error is over listeners
    too, else drawn afresh for every clip), scales every width by the pilot's figure over its
    simulated pilots' and checks that, so scaled, its error changes with the number of listeners as
    the pilot's does (evaluation.stats.kappa_widths.kappa_check). A design's width is marked
    `kappa_can_tell` False, and meets no target, where that check fails or where the width's
    uncertainty (the pilot's and the simulation's) leaves it more than FIT_TOLERANCE open;
    check["kappa_reason"] says why and check["kappa_untold"] which; `kappa_width_se` holds that
    uncertainty."""
    if replicates < 2:
        raise ValueError("the designer needs at least two replicates for its Monte Carlo error")
    if not annotators or min(annotators) < 2:
        raise ValueError("a design needs at least two annotators a clip")
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        raise ValueError(f"unknown design mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}")
    simulated_clips = min(simulated_clips, assumptions.clips) if simulated_clips > 0 else assumptions.clips
    rng = np.random.default_rng(seed)
    checked = tuple(sorted({figure.n for figure in measured}))
    pool = max((*annotators, *checked)) + 1
    figures: dict[tuple[int, str], list[tuple]] = {(n, m): [] for n in annotators for m in modes}
    predicted: dict[int, list[float]] = {n: [] for n in checked}
    pairs = np.arange(replicates) // 2 if resamples else np.zeros(replicates, dtype=np.int64)
    kappas = _measured_kappas(measured_kappa)
    anchor: dict[int, list[float]] = {figure.n: [] for figure in kappas}
    for replicate in range(replicates):
        crowd = resamples[pairs[replicate] % len(resamples)] if resamples else assumptions
        levels, person, _ = simulated_crowd(crowd, clips=simulated_clips, annotators=pool, rng=rng)
        rule = (probabilistic, fitted_prior(levels, probabilistic.minimum)) if "probabilistic" in modes else None
        for n in annotators:
            for mode in modes:
                figures[(n, mode)].append(design_figures(levels, n, mode, probabilistic=rule, person=person))
        for n in checked:
            predicted[n].append(design_figures(levels, n, "fixed")[2])
        _simulate_pilot_kappas(crowd, kappas, anchor, rng)
    scale = math.sqrt(simulated_clips / assumptions.clips)
    anchor_pairs = np.repeat(pairs, ANCHOR_SIMULATIONS)
    calibrations = {figure.n: kappa_calibration(figure, np.array(anchor[figure.n]), anchor_pairs) for figure in kappas}
    calibrations = {n: calibration for n, calibration in calibrations.items() if calibration}
    raw = {n: _row(n, modes[0], figures[(n, modes[0])], pairs, assumptions, targets, scale, 1.0) for n in annotators}
    # The pilot's uncertainty about its crowd: how the designer's kappa error moves over its
    # resamples, pooled over the designs (the same crowds: each design's own estimate is noisy).
    spread = pilot_relative_sd([np.array(figures[(n, modes[0])])[:, 5] for n in annotators], pairs)
    pilot_spread = dict.fromkeys(annotators, spread)
    widths = kappa_check(
        calibrations, {n: (row.kappa_width, row.kappa_width_se, pilot_spread[n]) for n, row in raw.items()}
    )
    rows = [
        _row(n, mode, figures[(n, mode)], pairs, assumptions, targets, scale, widths["factors"][n])
        for n in annotators
        for mode in modes
    ]
    rows = [_with_kappa_uncertainty(row, widths["uncertainty"][row.annotators]) for row in rows]
    rows = [
        replace(row, kappa_can_tell=False, meets_targets=False) if row.annotators in widths["untold"] else row
        for row in rows
    ]
    calibration = calibrations[max(calibrations)] if calibrations else {}
    check = {
        **_fit_check(measured, predicted),
        "kappa": calibration,
        "kappas": list(calibrations.values()),
        "kappa_reason": widths["reason"],
        "kappa_untold": sorted(widths["untold"]),
    }
    if not check["can_tell"]:
        rows = [replace(row, meets_targets=False, can_tell=False) for row in rows]
    recommendation = _recommend(rows, targets, check)
    return Design(
        assumptions,
        targets,
        replicates,
        simulated_clips,
        seed,
        rows,
        recommendation,
        probabilistic,
        check,
        len(resamples),
    )


def _measured_kappas(measured: "MeasuredKappa | tuple[MeasuredKappa, ...] | None") -> tuple[MeasuredKappa, ...]:
    """The pilot's kappa errors by n (one, several or none), one a number of listeners."""
    if measured is None:
        return ()
    figures = (measured,) if isinstance(measured, MeasuredKappa) else tuple(measured)
    return tuple({figure.n: figure for figure in figures if np.isfinite(figure.se) and figure.se > 0}.values())


def _simulate_pilot_kappas(crowd: DesignAssumptions, kappas, anchor: dict, rng) -> None:
    """ANCHOR_SIMULATIONS simulations of the pilot as it was measured, each measured n's figure of
    them added to `anchor`: its clips, n listeners a clip; where the pilot's error is clustered by
    listener, listeners over tasks as the designer's crowd has them and the figure the pilot's own
    (two_way_jackknife_se: the same estimator on both sides, and a mean of errors much steadier
    than a spread of kappas); else listeners drawn afresh each clip and the figure kappa."""
    for listeners in {figure.listeners for figure in kappas}:
        group = [figure for figure in kappas if figure.listeners == listeners]
        as_measured = crowd if listeners else replace(crowd, clips_per_task=1)
        clips, most = max(figure.clips for figure in group), max(figure.n for figure in group)
        for _ in range(ANCHOR_SIMULATIONS):
            pilot, person, _ = simulated_crowd(as_measured, clips=clips, annotators=most + 1, rng=rng)
            for figure in group:
                levels = pilot[: figure.clips, : figure.n]
                if listeners:
                    anchor[figure.n].append(
                        _kept_kappa_se(levels, person[: figure.clips], np.ones(levels.shape[:2], dtype=bool))
                    )
                else:
                    anchor[figure.n].append(design_figures(pilot[: figure.clips], figure.n, "fixed")[0])


def _fit_check(measured: tuple[MeasuredFlips, ...], predicted: dict[int, list[float]]) -> dict:
    """Can the designer tell? Its simulated crowd's flip share at each n the pilot measured, against
    the pilot's: apart by more than FIT_TOLERANCE of the pilot's figure plus twice their combined
    standard error, the crowd is not one the designer simulates."""
    if not measured:
        return {"can_tell": True, "checked": [], "reason": "not checked: no pilot with three or more listeners a clip"}
    checked, apart = [], []
    for figure in measured:
        ours = np.array(predicted[figure.n])
        ours_se = float(ours.std(ddof=1) / math.sqrt(ours.size)) if ours.size > 1 else 0.0
        allowed = FIT_TOLERANCE * figure.share + 2 * math.hypot(figure.se, ours_se)
        holds = abs(float(ours.mean()) - figure.share) <= allowed
        checked.append({"n": figure.n, "pilot": figure.share, "pilot_se": figure.se, "designer": float(ours.mean()),
                        "designer_se": ours_se, "holds": holds})  # fmt: skip
        if not holds:
            apart.append(
                f"{figure.n} listeners: the pilot's {figure.share:.2%}, the designer's crowd {ours.mean():.2%}"
            )
    if apart:
        reason = (
            "cannot tell: the labels one more listener flips, measured on the pilot, are not what the designer's "
            f"simulated crowd gives ({'; '.join(apart)}), more than {FIT_TOLERANCE:.0%} apart beyond noise. The crowd "
            "behaves in a way the designer does not simulate (listeners who mark the same position, say), so its "
            "figures for other designs would not hold"
        )
        return {"can_tell": False, "checked": checked, "reason": reason}
    return {
        "can_tell": True,
        "checked": checked,
        "reason": "the designer's crowd flips the pilot's labels as the pilot does",
    }


def simulated_levels(assumptions: DesignAssumptions, *, clips: int, annotators: int, rng) -> np.ndarray:
    """(clips, annotators, words) levels 0, 1, 2 of a crowd made by `assumptions`: simulated_crowd's levels."""
    return simulated_crowd(assumptions, clips=clips, annotators=annotators, rng=rng)[0]


def simulated_crowd(
    assumptions: DesignAssumptions, *, clips: int, annotators: int, rng
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(clips, annotators, words) levels 0, 1, 2 of a crowd made by `assumptions` (see the module),
    (clips, annotators) the person in each slot, and (clips, words) which words are emphasized (the
    truth that evaluation.stats.allocation_check scores designs against).

    Listeners are people who hear a task of `clips_per_task` clips, as on Prolific: slot s of every
    clip (the s-th listener) shuffles the clips into tasks, one new listener a task, and a
    listener's kind (spammer or honest), a spammer's profile and an honest listener's own shift
    hold over their whole task. Which listeners a study happens to draw then moves its figures
    together, as it does in a real study (the kappa of a crowd with a few heavy markers swings
    with how many it drew). `persons`: (levels, the (clips, annotators) person in each slot)."""
    a = assumptions
    words = a.words_per_clip
    p, spam_p, emphasized = _word_chance_draws(a, (clips, words), rng)
    person = listeners_of(clips, annotators, a.clips_per_task, rng)  # (clips, annotators)
    people = int(person.max()) + 1
    spammer = (rng.random(people) < a.spammers)[person][..., None]
    shift = rng.normal(0.0, a.listener_spread, size=people)[person][..., None] if a.listener_spread > 0 else 0.0
    honest = _expit(_logit(p)[:, None, :] + shift)
    rate, heavy_rate = _spammer_rates(a, people, rng)
    if spam_p is None:
        spam_chance = rate[person][..., None]
    else:
        # A spammer marks the words spammers mark (a clip's first word, say), as often as their own rate.
        spam_chance = _expit(_logit(spam_p)[:, None, :] + _rate_shifts(rate, a.word_chances)[person][..., None])
    chance = np.where(spammer, spam_chance, honest)
    marked = rng.random((clips, annotators, words)) < chance
    heavy_chance = np.where(emphasized, a.heavy_share, a.heavy_share / 3)[:, None, :]
    if heavy_rate is not None:
        heavy_chance = np.where(spammer, heavy_rate[person][..., None], heavy_chance)
    heavy = rng.random((clips, annotators, words)) < heavy_chance
    return (marked.astype(np.int8) + (marked & heavy)).astype(np.int8), person, emphasized


def _word_chance_draws(a: DesignAssumptions, shape, rng) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Every word's chance of an honest mark, of a spammer's mark (None: any word alike) and whether
    it is emphasized: from the pilot's distribution (emphasized: an honest chance above one half;
    spammers' chances only with the pilot's spammers), else from the two Beta classes."""
    if a.word_chances:
        points = np.asarray(a.word_chances, dtype=np.float64)
        drawn = points[
            _pilot_word_points(a, shape, rng)
            if a.pilot_clips
            else rng.choice(len(points), size=shape, p=points[:, 2] / points[:, 2].sum())
        ]
        return drawn[..., 0], drawn[..., 1] if a.spammer_profiles else None, drawn[..., 0] > 0.5
    emphasized = rng.random(shape) < a.emphasis_rate
    mean = np.where(emphasized, a.accuracy, 1 - a.accuracy)
    concentration = (1 - a.heterogeneity) / a.heterogeneity  # a + b of the Beta
    return rng.beta(mean * concentration, (1 - mean) * concentration), None, emphasized


def _pilot_word_points(a: DesignAssumptions, shape, rng) -> np.ndarray:
    """(clips, words) index of each word's chances among word_chances: the pilot's clips drawn with
    replacement (a clip of other length: its words taken in turn), a point for each word from its
    kind's posterior."""
    clips, words = shape
    chosen = rng.integers(0, len(a.pilot_clips), size=clips)
    kinds = np.array([[a.pilot_clips[c][w % len(a.pilot_clips[c])] for w in range(words)] for c in chosen])
    cumulative = np.cumsum(np.asarray(a.word_posteriors, dtype=np.float64), axis=1)
    drawn = rng.random(shape)[..., None] * cumulative[kinds, -1:]
    return np.minimum((cumulative[kinds] < drawn).sum(axis=-1), cumulative.shape[1] - 1)


def _rate_shifts(rates: np.ndarray, points) -> np.ndarray:
    """Per spammer, the shift (logit) of the spammers' word chances that gives them their own
    marking rate over the distribution of words (bisection; a rate of 0 or 1 marks nothing or all)."""
    points = np.asarray(points, dtype=np.float64)
    base, weight = _logit(points[:, 1])[None, :], points[:, 2][None, :] / points[:, 2].sum()
    low, high = np.full(rates.size, -60.0), np.full(rates.size, 60.0)
    for _ in range(50):
        middle = (low + high) / 2
        above = (_expit(base + middle[:, None]) * weight).sum(axis=1) > rates
        high, low = np.where(above, middle, high), np.where(above, low, middle)
    return (low + high) / 2


def listeners_of(clips: int, slots: int, per_task: int, rng) -> np.ndarray:
    """(clips, slots) the person in each slot: each slot shuffles the clips into tasks of `per_task`."""
    tasks = -(-clips // per_task)
    person = np.empty((clips, slots), dtype=np.int64)
    for slot in range(slots):
        person[rng.permutation(clips), slot] = slot * tasks + np.arange(clips) // per_task
    return person


def _spammer_rates(a: DesignAssumptions, people: int, rng) -> tuple[np.ndarray, np.ndarray | None]:
    """Each person's marking rate and level-2 share were they a spammer: one of the pilot's
    spammers' profiles; or the crowd's overall rate, and the word's level-2 chance (None)."""
    if a.spammer_profiles:
        profiles = np.asarray(a.spammer_profiles, dtype=np.float64)
        drawn = profiles[rng.integers(0, len(profiles), size=people)]
        return drawn[:, 0], drawn[:, 1]
    overall = a.emphasis_rate * a.accuracy + (1 - a.emphasis_rate) * (1 - a.accuracy)
    return np.full(people, overall), None


def _logit(p):
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return np.log(p) - np.log1p(-p)


def _expit(x):
    return 1 / (1 + np.exp(-x))


def fitted_prior(levels: np.ndarray, minimum: int) -> BetaBinomialPredictive:
    """The beta prior of probabilistic stopping, fitted (evaluation.stats.stopping.beta_prior_fit) to the
    marks of the first `minimum` listeners of every clip, which every probabilistic design pays for
    (at most the simulated listeners); Jeffreys' when too few words have two annotations, as live."""
    seen = min(minimum, levels.shape[1])
    marks = (levels[:, :seen, :] >= 1).sum(axis=1)
    return beta_prior_fit(marks, np.full(marks.shape, seen)) or BetaBinomialPredictive()


def design_figures(
    levels: np.ndarray,
    n: int,
    mode: str,
    *,
    probabilistic: tuple[ProbabilisticStopping, BetaBinomialPredictive] | None = None,
    person: np.ndarray | None = None,
) -> tuple[float, float, float, float, float, float]:
    """(kappa, ordinal alpha, flip share, differing share, annotations a clip, kappa's standard
    error) of one simulated study under one design; `levels` has at least n + 1 annotators a clip
    (the first n are the design's). `probabilistic`: the rule and its fitted prior, which the
    probabilistic mode needs. `person` (clips, annotators): who is in each slot, for kappa's error
    (evaluation.stats.kappa_jackknife, over clips and listeners; NaN without)."""
    marks = np.cumsum(levels >= 1, axis=1)  # (clips, k, words): marks among the first k listeners
    if mode == "exact":
        heard = stop_points(marks[:, :n, :], n)
    elif mode == "probabilistic":
        if probabilistic is None:
            raise ValueError("the probabilistic mode needs its stopping rule and fitted prior")
        heard = probabilistic_stop_points(marks[:, :n, :], n, *probabilistic)
    else:
        heard = np.full(levels.shape[0], n)
    kept = np.arange(levels.shape[1])[None, :] < heard[:, None]  # (clips, annotators)
    counts = np.stack([((levels == level) & kept[:, :, None]).sum(axis=1).ravel() for level in range(3)], axis=1)
    binary = np.stack([counts[:, 0], counts[:, 1] + counts[:, 2]], axis=1)
    kappa = fleiss_kappa(binary).value
    ordinal = alpha(counts, "ordinal").value
    # The design's labels: the majority of the annotations each clip got (what a label set gives).
    labels = (2 * binary[:, 1] > binary.sum(axis=1)).reshape(marks.shape[0], -1)
    flips = labels != (2 * marks[:, n, :] > n + 1)
    differing = labels != (2 * marks[:, n - 1, :] > n)
    return (
        np.nan if kappa is None else kappa,
        np.nan if ordinal is None else ordinal,
        float(flips.mean()),
        float(differing.mean()),
        float(heard.mean()),
        np.nan if person is None else _kept_kappa_se(levels, person, kept),
    )


def _kept_kappa_se(levels: np.ndarray, person: np.ndarray, kept: np.ndarray) -> float:
    """two_way_jackknife_se of the annotations `kept` (clips, annotators; the first columns of
    `levels` and of `person`, who is in each slot) of a simulated study; NaN where undefined."""
    clip = np.broadcast_to(np.arange(levels.shape[0])[:, None], kept.shape)
    se = two_way_jackknife_se(clip[kept], person[:, : kept.shape[1]][kept], levels[kept])
    return np.nan if se is None else se


def stop_points(marks: np.ndarray, target: int) -> np.ndarray:
    """Per clip, the listeners after which exact stopping stops it: the first k at which every word
    is decided (m > N/2, or m + (N - k) <= N/2); N when none is earlier. `marks` is (clips, k, words),
    the cumulative marks after each of the first `target` listeners: the adaptive designs' own rule
    (evaluation.stats.stopping.decided), so that the designer plans what a study will do."""
    k = np.arange(1, target + 1)[None, :, None]
    settled = np.asarray(decided(marks, k, target).all(axis=2))  # (clips, k)
    return np.where(settled.any(axis=1), settled.argmax(axis=1) + 1, target)


def probabilistic_stop_points(
    marks: np.ndarray, target: int, rule: ProbabilisticStopping, prior: BetaBinomialPredictive
) -> np.ndarray:
    """Per clip, the listeners after which probabilistic stopping stops it: the first k of at least
    `rule.minimum` at which every word's flip probability (evaluation.stats.stopping.flip_probabilities,
    the live rule's, under `prior`) is below `rule.epsilon`; N when none is earlier. `marks` as for
    `stop_points`. Clips are tested in order of k, only those still going, as listeners come."""
    clips, _, words = marks.shape
    stops = np.full(clips, target)
    going = np.arange(clips)
    for seen in range(rule.minimum, target):
        if going.size == 0:
            break
        flips = flip_probabilities(marks[going, seen - 1, :].ravel(), seen, target, prior).reshape(going.size, words)
        settled = (flips < rule.epsilon).all(axis=1)
        stops[going[settled]] = seen
        going = going[~settled]
    return stops


def _row(
    n, mode, replicate_figures, pairs, assumptions: DesignAssumptions, targets: Targets, scale: float, factor: float
) -> DesignRow:
    """One design's figures over the replicates; `pairs`: each replicate's resample (all 0 without);
    `factor`: the pilot's calibration of the kappa widths (kappa_calibration)."""
    values = np.array(replicate_figures, dtype=np.float64)  # (replicates, 6)
    r = values.shape[0]

    def width(column):
        finite = np.isfinite(values[:, column])
        sd, df = within_sd(values[finite, column], pairs[finite])
        if df < 1:
            return float("nan"), float("nan")
        # The normal error, or the spread's own where its parts say more (too few parts: the normal).
        robust = _sd_relative_error(values[finite, column], pairs[finite])
        relative = max(1 / math.sqrt(2 * df), robust if math.isfinite(robust) else 0.0)
        return 2 * Z95 * sd * scale, 2 * Z95 * sd * scale * relative

    def mean_and_se(column):
        return float(values[:, column].mean()), float(values[:, column].std(ddof=1) / math.sqrt(r))

    def error_width(column, spread_column):
        # The mean of the replicates' own errors of kappa (their jackknife): as the spread of their
        # kappas where it is defined (tracked within 12 % on the harness's crowds), and its Monte
        # Carlo error a tenth of the spread's. The spread where too few replicates have one.
        finite = np.isfinite(values[:, column])
        if finite.sum() < 2:
            return width(spread_column)
        within, df = within_sd(values[finite, column], pairs[finite])
        noise = within if df >= 1 else float(values[finite, column].std(ddof=1))
        mean = float(values[finite, column].mean())
        return 2 * Z95 * mean * scale, 2 * Z95 * noise / math.sqrt(finite.sum()) * scale

    kappa_width, kappa_width_se = (factor * value for value in error_width(5, 0))
    alpha_width, alpha_width_se = width(1)
    flip, flip_se = mean_and_se(2)
    flip_low, flip_high = _band(values[:, 2], pairs)
    can_tell = flip_high <= (1 + FIT_TOLERANCE) * flip and flip_low >= flip / (1 + FIT_TOLERANCE)
    differing, differing_se = mean_and_se(3)
    per_clip, per_clip_se = mean_and_se(4)
    hours = per_clip * assumptions.audio_seconds * assumptions.seconds_per_audio_second / 3600
    return DesignRow(
        annotators=n,
        mode=mode,
        kappa=_finite_mean(values[:, 0]),
        kappa_width=kappa_width,
        kappa_width_se=kappa_width_se,
        alpha_ordinal=_finite_mean(values[:, 1]),
        alpha_width=alpha_width,
        alpha_width_se=alpha_width_se,
        flip_share=flip,
        flip_share_se=flip_se,
        flip_share_low=flip_low,
        flip_share_high=flip_high,
        differing_share=differing,
        differing_share_se=differing_se,
        annotations_per_clip=per_clip,
        annotations_per_clip_se=per_clip_se,
        participant_hours=hours,
        cost=hours * assumptions.hourly_rate,
        can_tell=bool(can_tell),
        meets_targets=bool(
            kappa_width <= targets.kappa_width
            and flip_high <= targets.flip_share
            and can_tell
            and differing <= DIFFERING_OF_FLIP * targets.flip_share
        ),
    )


def _sd_relative_error(values: np.ndarray, pairs: np.ndarray) -> float:
    """The relative standard error of within_sd from the spread of its parts (each resample's
    variance, or each replicate's squared deviation without resamples), which heavy tails widen
    beyond the normal 1 / sqrt(2 df): a crowd whose rare listeners swing kappa (a replicate that
    drew many of them) gives spreads of replicates that differ much from one try to the next."""
    groups, group_of = np.unique(pairs, return_inverse=True)
    size = np.bincount(group_of)
    means = np.bincount(group_of, values) / size
    squares = (values - means[group_of]) ** 2
    if groups.size >= 2:
        parts, weights = np.bincount(group_of, squares) / np.maximum(size - 1, 1), (size - 1).astype(np.float64)
    else:
        parts, weights = squares * values.size / max(values.size - 1, 1), np.ones(values.size)
    used = weights > 0
    parts, weights = parts[used], weights[used]
    if parts.size < 2:
        return float("inf")
    variance = float(np.sum(weights * parts) / weights.sum())
    if not variance > 0:
        return float("inf")
    spread = math.sqrt(float(np.sum(weights**2 * (parts - variance) ** 2))) / weights.sum()
    return 0.5 * spread / variance


def _band(values: np.ndarray, pairs: np.ndarray) -> tuple[float, float]:
    """The central 2 x HIGH_QUANTILE - 1 band of the statistic over the pilot's uncertainty: the
    spread of its means under each resample, less what the replicates' own noise adds to them
    (the spread within resamples), as a normal band about the mean; the mean, twice, without
    resamples."""
    mean = float(values.mean())
    half = float(norm.ppf(HIGH_QUANTILE)) * pilot_sd(values, pairs)
    return max(0.0, mean - half), mean + half


def _with_kappa_uncertainty(row: DesignRow, relative: float) -> DesignRow:
    """The row with its kappa width's standard error widened by `relative` (the calibration's and
    the pilot's, _kappa_check) beside the simulation's own."""
    if not row.kappa_width > 0:
        return row
    simulation = row.kappa_width_se / row.kappa_width
    return replace(row, kappa_width_se=row.kappa_width * math.hypot(simulation, relative))


def _finite_mean(column: np.ndarray) -> float:
    """The mean over the replicates where the statistic exists (none when every clip stopped at one
    annotation: nan)."""
    finite = column[np.isfinite(column)]
    return float(finite.mean()) if finite.size else float("nan")


def _recommend(rows: list[DesignRow], targets: Targets, check: dict) -> dict:
    """The cheapest design that meets both targets (a probabilistic one only if it changes at most
    DIFFERING_OF_FLIP of the flip target's share of the fixed design's labels, which meets_targets
    holds); else, of those that change so few, the one with the fewest flips."""
    meeting = [row for row in rows if row.meets_targets]
    if meeting:
        # On equal hours (probabilistic stopping no earlier than exact), the design that changes no label.
        best = min(meeting, key=lambda row: (row.participant_hours, row.annotators, row.differing_share))
        reason = (
            f"the cheapest design whose kappa interval is at most {targets.kappa_width} wide and whose labels one "
            f"more listener flips for at most {targets.flip_share:.1%} of words"
        )
        if best.mode == "probabilistic":
            reason += (
                f"; its stopping changes {best.differing_share:.2%} of the fixed design's labels, at most "
                f"{DIFFERING_OF_FLIP:.0%} of that share"
            )
    elif not check["can_tell"]:
        # Figures that do not hold cannot pick the cheapest: the most listeners, fixed, is the safe side.
        best = max((row for row in rows if row.mode == "fixed"), key=lambda row: row.annotators, default=rows[-1])
        reason = f"{check['reason']}; the most listeners tried, fixed, is the safe side, and a larger pilot may tell"
    else:
        close = [row for row in rows if row.differing_share <= DIFFERING_OF_FLIP * targets.flip_share] or rows
        best = min(close, key=lambda row: (row.flip_share, row.participant_hours))
        reason = (
            "no design from the ones tried meets both targets; this one flips the fewest labels "
            "(a pilot, more clips or other targets may tell more)"
        )
        untold = sum(not row.can_tell for row in rows)
        if untold:
            reason += (
                f"; for {untold} of the designs the designer cannot tell: the pilot leaves their flip share more "
                f"than {FIT_TOLERANCE:.0%} open (a larger pilot may tell)"
            )
    fixed_ten = next((row for row in rows if row.annotators == 10 and row.mode == "fixed"), None)
    saving = None
    if fixed_ten is not None and fixed_ten.participant_hours > 0:
        saving = 1 - best.participant_hours / fixed_ten.participant_hours
    return {
        "annotators": best.annotators,
        "mode": best.mode,
        "participant_hours": best.participant_hours,
        "cost": best.cost,
        "meets_targets": best.meets_targets,
        "can_tell": bool(check["can_tell"] and best.can_tell and best.kappa_can_tell),
        "differing_share": best.differing_share,
        "reason": reason,
        "saving_against_10_fixed": saving,
    }
