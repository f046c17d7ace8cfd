"""StressTest scores of systems (a model's answers), beside the human listening-form scores. Pure
Python, numpy and statsmodels: no Django.

- system_ssr (Sentence Stress Reasoning): a system answers each item once. Accuracy is the share of
  items whose answer names the gold interpretation, with a Wilson 95 % interval (items are the
  trials). Every item with a gold answer counts: an answer that names no option (or several) is
  wrong, and is also counted in `failures` with its reason, so a system cannot gain by refusing.
  Items without gold are left out and counted. Per category (item metadata "category") the same.
- system_ssd (Sentence Stress Detection): precision, recall and F1 of the words the system names as
  stressed against the gold stressed words, pooled over every (item, word) and as the mean over
  items of each item's own figure (over the items where it is defined: precision needs a predicted
  word, recall a gold one). An answer that cannot be read counts as predicting no stressed word
  (so it costs recall) and is counted in `failures`.
- comparison_table: humans (accuracy over all answers, majority-vote accuracy over items) and each
  system (accuracy, failures), overall and per category, on the items every one of them answered.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from evaluation.stats.listening_forms import precision_recall_f1, wilson
from evaluation.stats.suites.answers import parse_choice, parse_stressed

CATEGORY_KEY = "category"


@dataclass(frozen=True)
class SystemChoiceItem:
    item_id: str
    gold: int | None  # the gold option's index
    options: tuple[str, ...]
    raw: object  # the system's answer as imported: an int, a text, ...
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SystemMarkedItem:
    item_id: str
    gold: tuple[int, ...] | None  # 1 for each stressed word
    words: tuple[str, ...]
    raw: object  # word indices, words, or a text naming words


def category_of(metadata: dict) -> str:
    """The item's stress category as text ("" when it has none), as the human breakdowns key it."""
    return str(metadata.get(CATEGORY_KEY, ""))


def failure_summary(failures, total: int) -> dict:
    """How many answers failed to parse, their share of `total`, and how many for each reason."""
    failures = list(failures)
    return {
        "failures": len(failures),
        "failure_rate": len(failures) / total if total else None,
        "failure_reasons": dict(sorted(Counter(failures).items())),
    }


def system_ssr(items) -> dict:
    scored = [item for item in items if item.gold is not None]
    rows = [_ssr_row(item) for item in scored]
    by_category = defaultdict(list)
    for row in rows:
        by_category[row["category"]].append(row)
    return {
        **_ssr_summary(rows),
        "items_without_gold": len(items) - len(scored),
        "per_category": {category: _ssr_summary(group) for category, group in sorted(by_category.items())},
        "per_item": rows,
    }


def _ssr_row(item: SystemChoiceItem) -> dict:
    parsed = parse_choice(item.raw, item.options)
    return {
        "item": item.item_id,
        "category": category_of(item.metadata),
        "gold": item.gold,
        "answer": parsed.option,
        "correct": parsed.option == item.gold,
        "failure": parsed.failure,
    }


def _ssr_summary(rows) -> dict:
    return {
        "items": len(rows),
        "accuracy": wilson(sum(row["correct"] for row in rows), len(rows)),
        **failure_summary((row["failure"] for row in rows if row["failure"]), len(rows)),
    }


def system_ssd(items) -> dict:
    scored = [item for item in items if item.gold]
    rows = [_ssd_row(item) for item in scored]
    pooled = np.sum([[row["tp"], row["fp"], row["fn"]] for row in rows], axis=0) if rows else (0, 0, 0)
    return {
        "items": len(rows),
        "items_without_gold": len(items) - len(scored),
        "pooled": precision_recall_f1(*pooled),
        "item_mean": metric_means(rows),
        **failure_summary((row["failure"] for row in rows if row["failure"]), len(rows)),
        "per_item": rows,
    }


def _ssd_row(item: SystemMarkedItem) -> dict:
    if item.gold is None:
        raise ValueError(f"item {item.item_id}: no gold to score against")
    if len(item.gold) != len(item.words):
        raise ValueError(f"item {item.item_id}: the gold has {len(item.gold)} words, the sentence {len(item.words)}")
    parsed = parse_stressed(item.raw, item.words)
    predicted = np.zeros(len(item.words), dtype=bool)
    predicted[list(parsed.indices or ())] = True
    gold = np.asarray(item.gold) >= 1
    counts = (predicted & gold).sum(), (predicted & ~gold).sum(), (~predicted & gold).sum()
    return {
        "item": item.item_id,
        "predicted": list(parsed.indices or ()),
        "failure": parsed.failure,
        **precision_recall_f1(*counts),
    }


def metric_means(rows) -> dict:
    """The mean of precision, recall and F1 over the rows where each is defined, and over how many."""
    out = {}
    for metric in ("precision", "recall", "f1"):
        defined = [row[metric] for row in rows if row[metric] is not None]
        out[metric] = float(np.mean(defined)) if defined else None
        out[f"{metric}_n"] = len(defined)
    return out


def comparison_table(*, human: dict, systems: dict) -> dict:
    """Humans and systems on the same items: `human` is listening_forms.choice_scores(...) of the SSR
    items, `systems` maps a system's name to its system_ssr(...). An item is compared when the humans
    and every system scored it; the others are listed in `items_left_out`. Categories come from the
    systems' items (human per-item rows carry none), so without a system there is no breakdown."""
    human_rows = {row["item"]: row for row in human["per_item"]}
    system_rows = {name: {row["item"]: row for row in result["per_item"]} for name, result in systems.items()}
    every = [set(human_rows), *(set(rows) for rows in system_rows.values())]
    shared = set.intersection(*every)
    categories = {item: row["category"] for rows in system_rows.values() for item, row in rows.items()}

    def table(items) -> list[dict]:
        return [_human_row([human_rows[item] for item in items])] + [
            _system_row(name, [rows[item] for item in items]) for name, rows in system_rows.items()
        ]

    by_category = defaultdict(list)
    for item in sorted(shared) if system_rows else ():
        by_category[categories[item]].append(item)
    return {
        "items": len(shared),
        "items_left_out": sorted(set.union(*every) - shared),
        "overall": table(sorted(shared)),
        "per_category": {category: table(items) for category, items in sorted(by_category.items())},
    }


def _human_row(rows) -> dict:
    return {
        "row": "humans",
        "kind": "human",
        "items": len(rows),
        "accuracy": wilson(sum(row["correct"] for row in rows), sum(row["answers"] for row in rows)),
        "majority_vote_accuracy": wilson(sum(row["majority_correct"] for row in rows), len(rows)),
        "failures": None,
        "failure_rate": None,
    }


def _system_row(name: str, rows) -> dict:
    summary = _ssr_summary(rows)
    return {
        "row": name,
        "kind": "system",
        "items": len(rows),
        "accuracy": summary["accuracy"],
        "majority_vote_accuracy": None,
        "failures": summary["failures"],
        "failure_rate": summary["failure_rate"],
    }
