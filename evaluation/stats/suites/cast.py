"""CAST scores: does a TTS system put the stress where the discourse calls for it? Pure numpy: no Django.

A CAST item is a sentence with two contexts: context A calls for stress on word A, context B on
word B. A system speaks the sentence once per context (side); a detector or listeners give the set
of stressed words of each rendition, Y_A and Y_B. Per pair (one item, one system, one mode):

- Hit = 1[A in Y_A]: the paper's definition, side A only.
- hit_both = the mean over the two sides of 1[A in Y_A] and 1[B in Y_B] (each side a trial).
- Pair-Contrast = 1[A in Y_A and B not in Y_A]: stress on the intended word and not on the rival.
- Pair-Correct = 1[(A in Y_A and B not in Y_A) and (B in Y_B and A not in Y_B)]: contrast on both
  sides at once, the strictest.

Each is the mean over scored pairs, with a percentile bootstrap 95 % interval over pairs (pairs
drawn with replacement, seeded: the same seed gives the same interval). A pair with a side missing
(no rendition, or no detection of it) is listed in `missing` and not scored: counting it as a miss
would mix missing audio with wrong stress.

detector_human_kappa: Cohen's kappa between a detector and the listeners on the binary label of
every word of every rendition both labelled (evaluation.stats.kappa.cohen_kappa), with its
Fleiss-Cohen-Everitt interval and a bootstrap over renditions (the words of a rendition share its
audio, so they are resampled together).
"""

from dataclasses import dataclass

import numpy as np

from evaluation.stats.intervals import too_few
from evaluation.stats.kappa import cohen_kappa
from evaluation.stats.resampling import bootstrap_sums, percentile_interval

METHOD = "percentile bootstrap over pairs (pairs resampled with replacement)"
KAPPA_METHOD = "Cohen's kappa over (rendition, word) binary labels; bootstrap over renditions"
# Each measure: the per-pair statistic summed, and the trials each scored pair adds.
MEASURES = {"hit": 1, "hit_both": 2, "pair_contrast": 1, "pair_correct": 1}


@dataclass(frozen=True)
class CastPair:
    item_id: str
    word_a: int  # the word context A calls to be stressed
    word_b: int
    stressed_a: frozenset | None  # Y_A: the stressed words of the side-A rendition; None: missing
    stressed_b: frozenset | None


def pair_outcomes(pair: CastPair) -> dict:
    """The 0/1 outcomes of one pair with both sides."""
    if pair.stressed_a is None or pair.stressed_b is None:
        raise ValueError(f"pair {pair.item_id}: a side is missing")
    a_in_a, b_in_a = pair.word_a in pair.stressed_a, pair.word_b in pair.stressed_a
    b_in_b, a_in_b = pair.word_b in pair.stressed_b, pair.word_a in pair.stressed_b
    contrast_a, contrast_b = a_in_a and not b_in_a, b_in_b and not a_in_b
    return {
        "item": pair.item_id,
        "hit_a": int(a_in_a),
        "hit_b": int(b_in_b),
        "contrast_a": int(contrast_a),
        "contrast_b": int(contrast_b),
        "correct": int(contrast_a and contrast_b),
    }


def _statistics(row: dict) -> list[int]:
    """A pair's contribution to each measure's sum, in MEASURES order."""
    return [row["hit_a"], row["hit_a"] + row["hit_b"], row["contrast_a"], row["correct"]]


def missing_sides(pair: CastPair) -> list[str]:
    return [side for side, stressed in (("A", pair.stressed_a), ("B", pair.stressed_b)) if stressed is None]


def pair_scores(pairs, *, resamples: int = 1000, seed: int = 0) -> dict:
    pairs = list(pairs)
    missing = [{"item": pair.item_id, "sides": missing_sides(pair)} for pair in pairs if missing_sides(pair)]
    rows = [pair_outcomes(pair) for pair in pairs if not missing_sides(pair)]
    per_pair = np.array([_statistics(row) for row in rows], dtype=np.float64).reshape(len(rows), len(MEASURES))
    resampled, why_none = _bootstrap(per_pair, resamples=resamples, seed=seed)
    measures = {}
    for column, (name, trials_per_pair) in enumerate(MEASURES.items()):
        trials = trials_per_pair * len(rows)
        successes = int(per_pair[:, column].sum())
        means = None if resampled is None else resampled[:, column] / trials
        measures[name] = _measure(successes, trials, means, why_none)
    return {
        "pairs": len(pairs),
        "scored": len(rows),
        "missing": missing,
        **measures,
        "per_pair": rows,
        "method": METHOD,
        "resamples": resamples,
        "seed": seed,
    }


def _bootstrap(per_pair: np.ndarray, *, resamples: int, seed: int):
    """Each resample's sums of the per-pair statistics, or why there are none."""
    few = too_few(per_pair.shape[0], "pairs")
    if few or resamples == 0:
        return None, few or "no resamples asked for"
    return bootstrap_sums(per_pair, resamples=resamples, seed=seed), None


def _measure(successes: int, trials: int, resampled_means, why_none: str | None) -> dict:
    if trials == 0:
        reason = "no pair has both sides"
        return {"value": None, "successes": 0, "trials": 0, "ci95": None, "ci95_undefined": reason}
    out = {"value": successes / trials, "successes": successes, "trials": trials, "ci95": None, "ci95_undefined": None}
    if why_none:
        return {**out, "ci95_undefined": why_none}
    interval = percentile_interval(resampled_means)
    return {**out, "ci95": [interval.low, interval.high]}


def word_labels(stressed, words: int) -> list[int]:
    """The 0/1 label of each of a rendition's words from the indices of its stressed words."""
    stressed = set(stressed)
    return [int(index in stressed) for index in range(words)]


def detector_human_kappa(detector: dict, human: dict, *, resamples: int = 1000, seed: int = 0) -> dict:
    """Cohen's kappa of a detector against the listeners. `detector` and `human` map a rendition's
    key to its words' 0/1 labels (word_labels; None for a word without a label). Renditions in one
    only are counted and left out; so are words one of the two left unlabelled."""
    shared = sorted(set(detector) & set(human), key=str)
    a, b, clusters = [], [], []
    for rendition in shared:
        if len(detector[rendition]) != len(human[rendition]):
            raise ValueError(
                f"rendition {rendition}: the detector labelled {len(detector[rendition])} words, "
                f"the listeners {len(human[rendition])}"
            )
        a.extend(detector[rendition])
        b.extend(human[rendition])
        clusters.extend([str(rendition)] * len(detector[rendition]))
    result = cohen_kappa(a, b, categories=(0, 1), clusters=clusters, resamples=resamples, seed=seed)
    boot = result.bootstrap
    return {
        "kappa": result.value,
        "reason": result.reason or None,
        "renditions": len(shared),
        "words": result.units,
        "detector_only": len(set(detector) - set(human)),
        "human_only": len(set(human) - set(detector)),
        "table": _table(a, b),
        "ci95": list(result.ci) if result.ci else None,
        "ci95_undefined": result.ci_reason or result.reason or None,
        "bootstrap_ci95": [boot.low, boot.high] if boot and boot.low is not None else None,
        "bootstrap_undefined": result.bootstrap_reason or result.reason or None,
        "method": KAPPA_METHOD,
        "resamples": resamples,
        "seed": seed,
    }


def _table(detector_labels, human_labels) -> list[list[int]]:
    """2 x 2 counts of words both labelled: rows the detector's label (0, 1), columns the listeners'."""
    table = [[0, 0], [0, 0]]
    for x, y in zip(detector_labels, human_labels):
        if x is not None and y is not None:
            table[int(x)][int(y)] += 1
    return table
