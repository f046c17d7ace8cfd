"""Does model allocation, or the ordinal predictor, beat the fixed design for the study at hand?
Pure numpy and scipy; no Django.

Model allocation (evaluation.stats.allocation) and probabilistic stopping with the ordinal
predictor (evaluation.stats.ordinal_predictive) rest on the ordinal annotator model. On crowds
that model does not assume (listeners who mark only the first content word of a clip, or only
heavy emphasis) greedy allocation with the model's labels had a word error 17.8 % above the fixed
design's majority (evaluation.stats.crowds), and on bench/adaptive.py at 600 clips it lost except
with 10 % spammers. So neither is offered unless the study's own pilot says it helps.

The check runs in the study designer's simulation (evaluation.stats.study_designer): one
replicate under each of the pilot's resamples (evaluation.stats.design_check.pilot_resamples,
the pilot's uncertainty), each a crowd of `simulated_clips` clips with its truth (a word is
emphasized where an honest listener would mark it with chance above one half). In each, at the
same budget:

- model allocation: every clip gets `minimum` listeners, the model is fitted once, and the rest of
  the fixed design's budget ((target - minimum) a clip) goes one listener at a time to the clip
  whose words' expected label-error reduction is largest, at most `maximum` a clip, each new
  annotation taken into its clip's word posteriors (as a live study does between refits); its
  labels the model's, refitted to all it got. Against the fixed design: the majority of `target`.
- the ordinal predictor: probabilistic stopping at `epsilon` from `minimum`, the model fitted once
  to the first `minimum` of every clip; its labels the majority of what each clip got. Against
  the fixed design at the same budget: as many annotations, spread evenly (a clip gets the mean
  rounded down, a random share of clips one more).

Each replicate gives the design's word error less the fixed design's. The design beats the fixed
design when their mean is below zero beyond a one-sided 5 % Student's t bound over the replicates
(the replicates' noise, which the pilot's resamples widen); above zero by as much, it loses; in
between, the check cannot tell. Nor can it where the designer's own fit check fails (the pilot's
crowd flips labels at a rate the designer's crowd does not: design_study's `check`).

Nor where the model, fitted to the pilot itself, gives labels a held-out listener agrees with
less often than the majority's (pilot_model_standing, evaluation.stats.held_out_standing: not
non-inferior at NON_INFERIORITY). The simulation cannot see this: the designer's crowd is fitted
to the pilot's marks, not to why they were given. Where 30 % of listeners mark only a clip's first
content word, the model's fit took their consistency for the crowd's hearing in half the pilots
(evaluation.stats.crowds, 200 clips x 10 listeners): its labels marked the first content word
alone (6.7 % of words against 13 % truly emphasized), allocation's word error was 15-17 % against
the fixed design's 8-10 %, and the simulation still said it beats. On those pilots the standing
said the model's labels are worse (or no better, by a wide interval); where the fit held (labels
5-6 % wrong against the majority's 8 %) it said better.
"""

import heapq
import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy.stats import t as student_t

from evaluation.stats.allocation import (
    emphasis_probabilities,
    model_clip_priority,
    prominence_model_fit,
    word_log_likelihoods,
)
from evaluation.stats.blas import one_blas_thread
from evaluation.stats.held_out_standing import HeldOutStanding, held_out_standing
from evaluation.stats.ordinal_predictive import OrdinalPredictive, ordinal_state_fit, prominence_posterior
from evaluation.stats.stopping import flip_probabilities
from evaluation.stats.study_designer import DesignAssumptions, simulated_crowd

DESIGNS = ("allocate", "ordinal")
NAMES = {"allocate": "Model allocation", "ordinal": "Probabilistic stopping with the ordinal predictor"}
ONE_SIDED = 0.05  # the chance that a design no better than the fixed one is said to beat it
# The model's labels may agree with a held-out listener at most this much less often than the
# majority's (the 95 % interval's lower end): on crowds where the two rules barely differ, an
# honest crowd's, the interval straddles 0 within a few thousandths.
NON_INFERIORITY = 0.005
BEATS, LOSES, CANNOT_TELL = "beats", "loses", "cannot tell"


@dataclass(frozen=True)
class CheckedDesign:
    """A study's adaptive settings, as the check simulates them (annotation.models.Study's)."""

    target: int = 10  # the fixed design's listeners a clip (target_annotations)
    minimum: int = 5  # every clip's first listeners (adaptive_min_annotators)
    maximum: int = 20  # most a clip may get under allocation (adaptive_max_per_clip)
    epsilon: float = 0.02  # probabilistic stopping's (adaptive_epsilon)

    def __post_init__(self):
        if not 1 <= self.minimum < self.target <= self.maximum:
            raise ValueError("the check needs 1 <= minimum < target <= maximum listeners a clip")
        if not 0 < self.epsilon < 0.5:
            raise ValueError("epsilon must be between 0 and 0.5")


@dataclass(frozen=True)
class Verdict:
    """Whether `design` beats the fixed design, with the figures and a sentence saying why."""

    design: str
    verdict: str  # BEATS, LOSES or CANNOT_TELL
    error: float  # the design's mean word error against the simulated truth
    fixed_error: float  # the fixed design's, at the same budget
    difference: float  # mean of error - fixed_error over the replicates (negative: the design is better)
    difference_se: float
    replicates: int
    annotations_per_clip: float
    reason: str

    @property
    def beats_fixed(self) -> bool:
        return self.verdict == BEATS

    def as_dict(self) -> dict:
        return {**asdict(self), "beats_fixed": self.beats_fixed}


def allocation_verdicts(
    resamples: tuple[DesignAssumptions, ...],
    *,
    design: CheckedDesign = CheckedDesign(),
    fit_check: dict | None = None,
    standing: HeldOutStanding | None = None,
    simulated_clips: int = 60,
    seed: int = 0,
) -> dict[str, Verdict]:
    """The verdict on each of DESIGNS, one replicate under each of the pilot's `resamples`;
    `fit_check`: the designer's (Design.check), whose failure leaves every verdict CANNOT_TELL;
    `standing`: the model's on the pilot itself (pilot_model_standing), which leaves them
    CANNOT_TELL where its labels are not non-inferior to the majority's."""
    if len(resamples) < 2:
        raise ValueError("the check needs at least two of the pilot's resamples for its noise")
    rng = np.random.default_rng(seed)
    differences: dict[str, list[tuple[float, float, float]]] = {name: [] for name in DESIGNS}
    # The ordinal fits' optimizer makes many tiny BLAS calls: threads cost ten times the work on a busy machine.
    with one_blas_thread():
        for crowd in resamples:
            levels, person, truth = simulated_crowd(crowd, clips=simulated_clips, annotators=design.maximum, rng=rng)
            differences["allocate"].append(_allocation_errors(levels, person, truth, design))
            differences["ordinal"].append(_ordinal_errors(levels, person, truth, design, rng))
    fit_check = fit_check or {}
    return {name: _verdict(name, np.array(differences[name]), fit_check, standing) for name in DESIGNS}


def pilot_model_standing(*, clip: np.ndarray, annotator: np.ndarray, levels: np.ndarray) -> HeldOutStanding | None:
    """The held-out standing of the labels both designs rest on (the ordinal model fitted to the
    pilot, read on the fine grid: its typical listener's verdict, evaluation.stats.allocation)
    against the majority's, on the pilot's own annotations (StudyData's arrays; levels -1 where
    a word was not heard). None where no word has two annotations; ValueError where the model
    cannot be fitted."""
    clip, annotator, levels = (np.asarray(array) for array in (clip, annotator, levels))
    people = int(annotator.max()) + 1 if annotator.size else 0
    model = prominence_model_fit(clip=clip, annotator=annotator, levels=levels, n_annotators=people)
    row, position = np.nonzero(levels >= 0)
    words, row_word = np.unique(clip[row] * levels.shape[1] + position, return_inverse=True)
    row_annotator, row_level = annotator[row], levels[row, position].astype(np.int64)
    likelihood = word_log_likelihoods(
        model, row_word=row_word, row_annotator=row_annotator, row_level=row_level, words=words.size
    )
    rows = _PilotRows(row_word, row_level, row_annotator, words // levels.shape[1], people)
    point = {
        "held_out": (
            model.log_prior + likelihood,
            lambda part: model.log_confusion[row_annotator[part], :, row_level[part]],
            model.emphasized,
        )
    }
    return held_out_standing(rows, point, chunk=20_000)  # 441 grid points a row


@dataclass(frozen=True)
class _PilotRows:
    """The pilot's (annotation, word) rows as held_out_standing reads them."""

    row_word: np.ndarray
    row_level: np.ndarray
    row_annotator: np.ndarray
    word_clip: np.ndarray
    n_annotators: int


def _allocation_errors(levels, person, truth, design: CheckedDesign) -> tuple[float, float, float]:
    """(allocation's word error, the fixed design's, allocation's annotations a clip)."""
    counts = greedy_allocation(levels, person, design)
    labels = model_labels(levels, person, counts)
    fixed = _majority(levels, np.full(levels.shape[0], design.target))
    return float((labels != truth).mean()), float((fixed != truth).mean()), float(counts.mean())


def greedy_allocation(levels: np.ndarray, person: np.ndarray, design: CheckedDesign) -> np.ndarray:
    """Per clip, the listeners model allocation gives it (see the module): the fixed design's budget,
    `minimum` a clip first, the rest by the model's priority, at most `maximum` a clip."""
    clips = levels.shape[0]
    counts = np.full(clips, design.minimum)
    model, likelihood = prominence_fit(levels, person, counts)
    heap = [(-model_clip_priority(model, likelihood[clip]), clip) for clip in range(clips)]
    heapq.heapify(heap)
    for _ in range((design.target - design.minimum) * clips):
        if not heap:
            break
        _, clip = heapq.heappop(heap)
        slot = counts[clip]
        listener = person[clip, slot]
        row = listener if listener < model.fitted.size and model.fitted[listener] else model.typical
        likelihood[clip] += model.log_confusion[row][:, levels[clip, slot]].T
        counts[clip] += 1
        if counts[clip] < design.maximum:
            heapq.heappush(heap, (-model_clip_priority(model, likelihood[clip]), clip))
    return counts


def model_labels(levels: np.ndarray, person: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(clips, words) the ordinal model's labels, fitted to the first `counts` listeners of each clip."""
    model, likelihood = prominence_fit(levels, person, counts)
    return emphasis_probabilities(model, likelihood.reshape(-1, likelihood.shape[2])).reshape(counts.size, -1) > 0.5


def prominence_fit(levels: np.ndarray, person: np.ndarray, counts: np.ndarray):
    """The ordinal model on the fine grid fitted to the first `counts` listeners of each clip, and
    each word's (clips, words, G) log-likelihood under it."""
    clips, _, words = levels.shape
    clip, slot = np.nonzero(np.arange(levels.shape[1])[None, :] < counts[:, None])
    annotator, given = person[clip, slot], levels[clip, slot]
    model = prominence_model_fit(clip=clip, annotator=annotator, levels=given, n_annotators=int(person.max()) + 1)
    likelihood = word_log_likelihoods(
        model,
        row_word=(clip[:, None] * words + np.arange(words)[None, :]).ravel(),
        row_annotator=np.repeat(annotator, words),
        row_level=given.ravel(),
        words=clips * words,
    )
    return model, likelihood.reshape(clips, words, -1)


def _ordinal_errors(levels, person, truth, design: CheckedDesign, rng) -> tuple[float, float, float]:
    """(probabilistic stopping's word error with the ordinal predictor, the fixed design's at the
    same budget, the annotations a clip it spent)."""
    heard = ordinal_stop_points(levels, person, design)
    spent = float(heard.mean())
    even = np.full(heard.size, math.floor(spent))
    even[rng.permutation(heard.size)[: round((spent - math.floor(spent)) * heard.size)]] += 1
    stopped, fixed = _majority(levels, heard), _majority(levels, even)
    return float((stopped != truth).mean()), float((fixed != truth).mean()), spent


def ordinal_stop_points(levels: np.ndarray, person: np.ndarray, design: CheckedDesign) -> np.ndarray:
    """Per clip, the listeners after which probabilistic stopping with the ordinal predictor stops
    it (the live rule: every word's chance of another label at the target below epsilon), the
    model fitted once to the first `minimum` of every clip; the target where none is earlier."""
    clips, _, words = levels.shape
    first = np.repeat(np.arange(clips), design.minimum)
    state = ordinal_state_fit(
        clip=first,
        annotator=person[:, : design.minimum].ravel(),
        levels=levels[:, : design.minimum].reshape(-1, words),
        n_annotators=int(person.max()) + 1,
    )
    marks = np.cumsum(levels >= 1, axis=1)
    stops = np.full(clips, design.target)
    going = np.arange(clips)
    for seen in range(design.minimum, design.target):
        rows_clip = np.repeat(going, seen)
        rows_slot = np.tile(np.arange(seen), going.size)
        row_word = (np.repeat(np.arange(going.size), seen)[:, None] * words + np.arange(words)[None, :]).ravel()
        posterior = prominence_posterior(
            state,
            row_word=row_word,
            row_parameters=state.parameters[np.repeat(person[rows_clip, rows_slot], words)],
            row_level=levels[rows_clip, rows_slot].ravel(),
            words=going.size * words,
        )
        now = marks[going, seen - 1, :].ravel()
        flips = flip_probabilities(now, seen, design.target, OrdinalPredictive(posterior, state.mark_chance))
        settled = (flips.reshape(going.size, words) < design.epsilon).all(axis=1)
        stops[going[settled]] = seen
        going = going[~settled]
        if going.size == 0:
            break
    return stops


def _majority(levels: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(clips, words) the published rule: more than half of each clip's first `counts` mark the word."""
    used = np.arange(levels.shape[1])[None, :, None] < counts[:, None, None]
    return 2 * ((levels >= 1) & used).sum(axis=1) > counts[:, None]


def _verdict(name: str, figures: np.ndarray, fit_check: dict, standing: HeldOutStanding | None = None) -> Verdict:
    error, fixed, spent = figures[:, 0], figures[:, 1], figures[:, 2]
    difference = error - fixed
    mean, se = float(difference.mean()), float(difference.std(ddof=1) / math.sqrt(difference.size))
    relative = mean / float(fixed.mean()) if fixed.mean() > 0 else 0.0
    said = (
        f"{NAMES[name]} gives a word error of {error.mean():.2%} against the fixed design's {fixed.mean():.2%} at the "
        f"same budget ({relative:+.1%}, difference {mean:+.2%} ± {se:.2%} over {difference.size} of the pilot's "
        "resamples)"
    )
    # Student's t over the few resamples (about 4): a normal 2 standard errors would say "beats" of
    # a design no better than the fixed one 7 % of the time with 3 degrees of freedom.
    margin = float(student_t.ppf(1 - ONE_SIDED, df=difference.size - 1))
    if not fit_check.get("can_tell", True):
        verdict, why = CANNOT_TELL, f"the designer cannot tell for this pilot ({fit_check.get('reason', '')})"
    elif standing is not None and standing.low <= -NON_INFERIORITY:
        verdict, why = (
            CANNOT_TELL,
            (
                "on the pilot itself, the model's labels agree with a held-out listener "
                f"{standing.difference:+.2%} as often as the majority's (95 % interval {standing.low:+.2%} to "
                f"{standing.high:+.2%}, below -{NON_INFERIORITY:.1%}): its fit to this crowd is not to be trusted, "
                "use the fixed design"
            ),
        )
    elif mean + margin * se < 0:
        verdict, why = BEATS, "it beats the fixed design beyond the replicates' noise"
    elif mean - margin * se > 0:
        verdict, why = LOSES, "it is worse than the fixed design: use the fixed design"
    else:
        verdict, why = CANNOT_TELL, "the difference is within the replicates' noise: use the fixed design"
    return Verdict(
        design=name,
        verdict=verdict,
        error=float(error.mean()),
        fixed_error=float(fixed.mean()),
        difference=mean,
        difference_se=se,
        replicates=int(difference.size),
        annotations_per_clip=float(spent.mean()),
        reason=f"{said}: {why}.",
    )
