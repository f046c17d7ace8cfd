"""Scores of listening forms, from plain answers. Pure Python, numpy, scipy and statsmodels: no Django.

Every answer is in the item's own terms (the option index, clip "a"/"b", pole "P"/"N"), never in
the order one participant was shown, so answers from different orders are comparable.

- single choice (StressTest SSR): accuracy over all answers and majority-vote accuracy over items,
  each with a Wilson 95 % interval; TIE_POLICY says how a tied vote counts.
- stressed words (StressTest SSD, appendix B.2): precision, recall, F1 of marked words against the
  gold stressed words, pooled over every (answer, word), averaged over items, and averaged over
  participants (each one's answers pooled: StressTest's "mean scores for 3 annotators").
- rating: mean opinion score with a Student-t 95 % interval cut to the rating scale (the true mean
  lies on the scale, so cutting keeps the coverage and the interval reads as scores), per item and
  per system (metadata "system"); none from fewer than evaluation.stats.intervals.MIN_UNITS ratings,
  with the reason, rather than a t interval wider than the scale.
- pairwise: preference rate for clip A over B; "no preference" answers are counted apart and left
  out of the rate and of the two-sided exact binomial test against 0.5.
- stance (StanceBench): stance_scores. Agreement: Fleiss' kappa (evaluation.stats.fleiss) per categorical type.

Pooled intervals treat answers as independent although they share items and listeners: with few
listeners per item, read them as a lower bound on the uncertainty.
"""

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
from statsmodels.stats.proportion import binom_test, proportion_confint

from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.intervals import t_interval, too_few

TIE_POLICY = (
    "An item whose most-chosen answers tie counts as incorrect in the majority vote, "
    "even when the gold answer is among them."
)
DISAGREEMENT_DEFINITION = (
    "Share of the items answered under both pole orders whose mean signed score has a different sign "
    "under order PN than under NP; a mean of exactly 0 under either order counts as a disagreement."
)
LACKING_ONE_ORDER_DEFINITION = (
    "Items lacking one order: items answered under only one pole order (PN or NP), left out of the "
    "disagreement rate. Assignment gives each item the two orders in turn, so an item normally lacks one only "
    "with a single answer or with answers left out (of rejected participants)."
)
_MAX_GROUPS = 20  # a metadata key with more distinct values than this is an identifier, not a breakdown


@dataclass(frozen=True)
class ChoiceItem:
    item_id: str
    gold: int | None
    choices: tuple[int, ...]  # the option index of each answer
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MarkedItem:
    item_id: str
    gold: tuple[int, ...]  # 1 for each stressed word
    markings: tuple[tuple[str, tuple[int, ...]], ...]  # (participant, level per word)
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RatedItem:
    item_id: str
    values: tuple[float, ...]
    metadata: dict = field(default_factory=dict)
    scale: tuple[float, float] | None = None  # the lowest and highest rating offered


@dataclass(frozen=True)
class PairItem:
    item_id: str
    preferences: tuple[str, ...]  # "a", "b" or "none"
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class StanceItem:
    item_id: str
    dimension: str
    answers: tuple[tuple[str, float, str], ...]  # (pole "P"/"N", confidence 0..1, pole order "PN"/"NP")


def wilson(successes: int, trials: int) -> dict:
    if trials == 0:
        return {"value": None, "successes": 0, "trials": 0, "ci95": None}
    low, high = proportion_confint(successes, trials, alpha=0.05, method="wilson")
    return {"value": successes / trials, "successes": successes, "trials": trials, "ci95": [float(low), float(high)]}


def mean_t_interval(values, *, bounds: tuple[float, float] | None = None, noun: str = "ratings") -> dict:
    """The mean, and its 95 % Student-t interval cut to `bounds`; none from too few values (the reason)."""
    values = [float(v) for v in values]
    n, mean = len(values), math.fsum(values) / len(values) if values else None
    few = too_few(n, noun)
    interval = None
    if not few and mean is not None:
        se = float(np.std(values, ddof=1)) / math.sqrt(n)
        interval = t_interval(mean, se, n - 1, bounds=bounds or (-math.inf, math.inf))
    return {
        "mean": mean,
        "n": n,
        "ci95": list(interval) if interval else None,
        "ci95_undefined": few if n else None,
        "scale": list(bounds) if bounds else None,
    }


def breakdown_keys(metadata_list) -> list[str]:
    """Metadata keys worth a breakdown: scalar values, 2..20 distinct values, fewer than the items."""
    values = defaultdict(set)
    for metadata in metadata_list:
        for key, value in metadata.items():
            if isinstance(value, (str, int, float, bool)):
                values[key].add(value)
    return sorted(key for key, seen in values.items() if 2 <= len(seen) <= min(_MAX_GROUPS, len(metadata_list) - 1))


def _groups(items, key: str) -> dict[str, list]:
    grouped = defaultdict(list)
    for item in items:
        grouped[str(item.metadata.get(key, ""))].append(item)
    return dict(sorted(grouped.items()))


def majority_choice(choices) -> int | None:
    """The most-chosen option, or None when the most-chosen options tie (or there are no answers)."""
    ranked = Counter(choices).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def choice_scores(items, *, by: list[str] | None = None) -> dict:
    scored = [item for item in items if item.gold is not None and item.choices]
    keys = breakdown_keys([item.metadata for item in scored]) if by is None else by
    return {
        **_choice_summary(scored),
        "items_without_gold": sum(1 for item in items if item.gold is None),
        "tie_policy": TIE_POLICY,
        "per_item": [_choice_item(item) for item in scored],
        "by": {key: {value: _choice_summary(group) for value, group in _groups(scored, key).items()} for key in keys},
    }


def _choice_item(item: ChoiceItem) -> dict:
    majority = majority_choice(item.choices)
    return {
        "item": item.item_id,
        "gold": item.gold,
        "answers": len(item.choices),
        "correct": sum(1 for choice in item.choices if choice == item.gold),
        "majority": majority,
        "tie": majority is None,
        "majority_correct": majority == item.gold,
    }


def _choice_summary(items) -> dict:
    rows = [_choice_item(item) for item in items]
    return {
        "items": len(rows),
        "accuracy": wilson(sum(row["correct"] for row in rows), sum(row["answers"] for row in rows)),
        "majority_vote_accuracy": wilson(sum(row["majority_correct"] for row in rows), len(rows)),
        "tied_items": sum(row["tie"] for row in rows),
    }


def precision_recall_f1(tp: int, fp: int, fn: int) -> dict:
    """None where undefined: precision without marks, recall without gold stress, F1 with neither."""
    tp, fp, fn = int(tp), int(fp), int(fn)
    return {
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None,
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def stressed_word_scores(items) -> dict:
    per_item, pooled = [], np.zeros(3, dtype=int)
    per_participant: defaultdict[str, np.ndarray] = defaultdict(lambda: np.zeros(3, dtype=int))
    for item in items:
        gold = np.asarray(item.gold) >= 1
        counts = np.zeros(3, dtype=int)
        for participant, levels in item.markings:
            if len(levels) != len(gold):
                raise ValueError(f"item {item.item_id}: an answer has {len(levels)} words, the gold has {len(gold)}")
            marked = np.asarray(levels) >= 1
            answer = np.array([(marked & gold).sum(), (marked & ~gold).sum(), (~marked & gold).sum()])
            counts += answer
            per_participant[participant] += answer
        pooled += counts
        if item.markings:
            per_item.append({"item": item.item_id, "answers": len(item.markings), **precision_recall_f1(*counts)})
    participants = [precision_recall_f1(*counts) for counts in per_participant.values()]
    return {
        "answers": sum(len(item.markings) for item in items),
        "pooled": precision_recall_f1(*pooled),
        "item_mean": _metric_means(per_item),
        "participant_mean": _metric_means(participants),
        "per_item": per_item,
    }


def _metric_means(rows) -> dict:
    """Mean of each metric over the rows where it is defined, with how many those were."""
    out = {}
    for metric in ("precision", "recall", "f1"):
        defined = [row[metric] for row in rows if row[metric] is not None]
        out[metric] = math.fsum(defined) / len(defined) if defined else None
        out[f"{metric}_n"] = len(defined)
    return out


def rating_scores(items) -> dict:
    systems, scales = defaultdict(list), defaultdict(list)
    for item in items:
        systems[str(item.metadata.get("system", ""))].extend(item.values)
        scales[str(item.metadata.get("system", ""))].append(item.scale)
    return {
        "per_item": [
            {
                "item": item.item_id,
                "system": str(item.metadata.get("system", "")),
                **mean_t_interval(item.values, bounds=item.scale),
            }
            for item in items
            if item.values
        ],
        "per_system": {
            system: mean_t_interval(values, bounds=_widest(scales[system]))
            for system, values in sorted(systems.items())
            if values
        },
    }


def _widest(scales) -> tuple[float, float] | None:
    """The scale that holds every item's (None when an item's is unknown)."""
    if not scales or any(scale is None for scale in scales):
        return None
    return min(low for low, _ in scales), max(high for _, high in scales)


def preference(preferences) -> dict:
    counts = Counter(preferences)
    a, b, ties = counts["a"], counts["b"], counts["none"]
    p_value = float(binom_test(a, a + b, prop=0.5, alternative="two-sided")) if a + b else None
    return {"a": a, "b": b, "no_preference": ties, "prefer_a": wilson(a, a + b), "p_value": p_value}


def pairwise_scores(items, *, by: list[str] | None = None) -> dict:
    answered = [item for item in items if item.preferences]
    keys = breakdown_keys([item.metadata for item in answered]) if by is None else by

    def pooled(group):
        return preference([answer for item in group for answer in item.preferences])

    return {
        "overall": pooled(answered),
        "per_item": [{"item": item.item_id, **preference(item.preferences)} for item in answered],
        "by": {key: {value: pooled(group) for value, group in _groups(answered, key).items()} for key in keys},
    }


def stance_item(item: StanceItem) -> dict:
    """Per item: the mean signed score under each pole order, and the consensus (the mean of the
    order means, so that an order answered by more people does not outweigh the other)."""
    by_order = defaultdict(list)
    for pole, confidence, order in item.answers:
        by_order[order].append(confidence if pole == "P" else -confidence)  # StanceBench's signed probability
    means = {order: math.fsum(scores) / len(scores) for order, scores in sorted(by_order.items())}
    both = {"PN", "NP"} <= means.keys()
    return {
        "item": item.item_id,
        "dimension": item.dimension,
        "answers": len(item.answers),
        "order_means": means,
        "consensus": math.fsum(means.values()) / len(means) if means else None,
        "both_orders": both,
        "disagree": both and not (np.sign(means["PN"]) == np.sign(means["NP"]) != 0),
    }


def stance_scores(items) -> dict:
    """Per dimension: the signed score (mean of the items' consensus, in [-1, 1]) with a t-interval
    over items, the pole-order disagreement rate (DISAGREEMENT_DEFINITION) and how many answered
    items lack one order (LACKING_ONE_ORDER_DEFINITION). StanceBench's
    "segment disagreement" compares one judge's two answers; a participant here answers an item
    under one order only, so the item's listeners under each order stand in for the judge."""
    rows = [stance_item(item) for item in items if item.answers]
    dimensions = {}
    for dimension in sorted({row["dimension"] for row in rows}):
        group = [row for row in rows if row["dimension"] == dimension]
        paired = [row for row in group if row["both_orders"]]
        disagreeing = sum(row["disagree"] for row in paired)
        dimensions[dimension] = {
            "items": len(group),
            "answers": sum(row["answers"] for row in group),
            "score": mean_t_interval([row["consensus"] for row in group], bounds=(-1.0, 1.0), noun="items"),
            "disagreement": {
                "items_with_both_orders": len(paired),
                "disagreeing": disagreeing,
                "rate": disagreeing / len(paired) if paired else None,
                "items_lacking_one_order": len(group) - len(paired),
            },
        }
    return {"definition": DISAGREEMENT_DEFINITION, "per_dimension": dimensions, "per_item": rows}


def fleiss_of_units(units, clusters=None) -> dict:
    """Fleiss' kappa of units given as lists of category labels (one per listener)."""
    categories = sorted({label for unit in units for label in unit}, key=str)
    index = {label: k for k, label in enumerate(categories)}
    counts = np.zeros((len(units), max(len(categories), 1)), dtype=np.int64)
    for row, unit in enumerate(units):
        for label in unit:
            counts[row, index[label]] += 1
    result = fleiss_kappa(counts, None if clusters is None else np.asarray(clusters))
    raters = [len(unit) for unit in units if unit]
    return {
        "kappa": result.value,
        "reason": result.reason,
        "ci95": list(result.ci) if result.ci else None,
        "ci95_undefined": result.ci_reason or None,
        "units": result.units,
        "categories": len(categories),
        "listeners_per_unit": [min(raters), max(raters)] if raters else None,
    }


def form_agreement(*, choices=(), pairs=(), stances=(), markings=()) -> dict:
    """Fleiss' kappa per categorical item type. Stressed-word units are words, clustered by item
    (the words of an item share their listeners), so their interval is cluster-robust."""
    out = {}
    if choices:
        out["single_choice"] = fleiss_of_units([item.choices for item in choices])
    if pairs:
        out["pairwise"] = fleiss_of_units([item.preferences for item in pairs])
    if stances:
        out["stance"] = fleiss_of_units([[pole for pole, _, _ in item.answers] for item in stances])
    if markings:
        units, clusters = [], []
        for number, item in enumerate(markings):  # gold is not needed: the words are the answers' length
            for word in range(len(item.markings[0][1]) if item.markings else 0):
                units.append([int(levels[word] >= 1) for _, levels in item.markings])
                clusters.append(number)
        out["stressed_words"] = fleiss_of_units(units, clusters)
    return out
