"""StanceBench scores of judges (models asked to rate speech on stance dimensions). Pure numpy and
scipy: no Django.

A judge answers every instance twice, once with the positive pole shown first (order "PN") and once
with the negative pole first ("NP"); each answer is a pole and a confidence (answers.parse_stance).
Per dimension:

- failure rate: answers that do not parse (or are absent) over the answers expected, 2 per
  instance (StanceBench's structural failures), with the count of each reason.
- signed probability of an instance: +confidence for P, -confidence for N, averaged over the orders
  whose answer parses; none when neither does.
- pole-order disagreement rate: DISAGREEMENT_DEFINITION, over the instances with both orders parsed.
- AUROC and EER of the signed probability against the weak labels (P positive), with percentile
  bootstrap 95 % intervals over instances (roc.py says how ties count). Instances without a signed
  probability or without a weak label are left out, and counted. Undefined, with the reason, when
  no instance is left or the weak labels left are all one class.
- spearman_vs_humans: Spearman's rank correlation of the judge's signed probabilities with the
  listeners' consensus score (listening_forms.stance_item) on the instances both scored.
"""

from collections import Counter
from dataclasses import dataclass, field

from scipy.stats import spearmanr

from evaluation.stats.suites.answers import NO_ANSWER, parse_stance
from evaluation.stats.suites.roc import roc_scores

ORDERS = ("PN", "NP")
MIN_SHARED = 3
DISAGREEMENT_DEFINITION = (
    "Share of the instances whose answers under both pole orders parse where the signed probability "
    "under order PN has a different sign than under NP; a signed probability of exactly 0 counts as a "
    "disagreement."
)


@dataclass(frozen=True)
class JudgeInstance:
    item_id: str
    dimension: str
    weak_label: str | None  # "P" or "N"
    answers: dict = field(default_factory=dict)  # pole order ("PN"/"NP") -> the judge's raw answer


def instance_row(instance: JudgeInstance) -> dict:
    """The parsed answer under each order, the instance's signed probability and whether the orders
    disagree (None unless both parse)."""
    unknown = set(instance.answers) - set(ORDERS)
    if unknown:
        raise ValueError(f"instance {instance.item_id}: pole orders must be PN or NP, not {sorted(unknown)}")
    parsed = {order: parse_stance(instance.answers.get(order)) for order in ORDERS}
    signed = {order: value for order, answer in parsed.items() if (value := answer.signed) is not None}
    both = len(signed) == len(ORDERS)
    return {
        "item": instance.item_id,
        "weak_label": instance.weak_label,
        "orders": {
            order: {
                "pole": answer.pole,
                "confidence": answer.confidence,
                "signed": answer.signed,
                "failure": answer.failure,
            }
            for order, answer in parsed.items()
        },
        "signed": sum(signed.values()) / len(signed) if signed else None,
        "disagree": (signed["PN"] * signed["NP"] <= 0) if both else None,
    }


def judge_scores(instances, *, resamples: int = 1000, seed: int = 0) -> dict:
    instances = list(instances)
    rows = [instance_row(instance) for instance in instances]
    dimensions = sorted({instance.dimension for instance in instances})
    per_dimension = {}
    for dimension in dimensions:
        group = [row for row, instance in zip(rows, instances) if instance.dimension == dimension]
        per_dimension[dimension] = dimension_scores(group, resamples=resamples, seed=seed)
    return {"definition": DISAGREEMENT_DEFINITION, "per_dimension": per_dimension}


def dimension_scores(rows, *, resamples: int, seed: int) -> dict:
    failures = [answer["failure"] for row in rows for answer in row["orders"].values() if answer["failure"]]
    expected = len(ORDERS) * len(rows)
    paired = [row for row in rows if row["disagree"] is not None]
    disagreeing = sum(row["disagree"] for row in paired)
    ranked = [row for row in rows if row["signed"] is not None and row["weak_label"] in ("P", "N")]
    roc = roc_scores(
        [row["weak_label"] == "P" for row in ranked], [row["signed"] for row in ranked], resamples=resamples, seed=seed
    )
    if not any(row["signed"] is not None for row in rows):  # say what is missing, not "no class"
        roc = _undefined_roc(roc, "no instance has an answer that parses")
    elif not ranked:
        roc = _undefined_roc(roc, "no scored instance has a weak label")
    return {
        "instances": len(rows),
        "answers_expected": expected,
        "failures": len(failures),
        "failure_rate": len(failures) / expected if expected else None,
        "failure_reasons": dict(sorted(Counter(failures).items())),
        "missing_answers": sum(1 for failure in failures if failure == NO_ANSWER),
        "scored_instances": sum(1 for row in rows if row["signed"] is not None),
        "left_out_of_roc": len(rows) - len(ranked),
        "disagreement": {
            "instances_with_both_orders": len(paired),
            "disagreeing": disagreeing,
            "rate": disagreeing / len(paired) if paired else None,
        },
        "auroc": roc["auroc"],
        "eer": roc["eer"],
        "roc": roc["roc"],
        "positives": roc["positives"],
        "negatives": roc["negatives"],
        "method": roc["method"],
        "resamples": resamples,
        "seed": seed,
        "per_instance": rows,
    }


def _undefined_roc(roc: dict, reason: str) -> dict:
    undefined = {**roc["auroc"], "reason": reason, "ci95_undefined": reason}
    return {**roc, "auroc": undefined, "eer": undefined}


def signed_by_item(dimension_result: dict) -> dict:
    """item -> the judge's signed probability (None where no answer parsed), from dimension_scores."""
    return {row["item"]: row["signed"] for row in dimension_result["per_instance"]}


def spearman_vs_humans(judge_scores: dict, human_consensus: dict) -> dict:
    """Spearman's rho of a judge's signed probabilities (item -> score, e.g. signed_by_item) with the
    listeners' consensus (item -> score) on the items both scored (None: not scored)."""
    shared = sorted(
        (
            item
            for item in set(judge_scores) & set(human_consensus)
            if judge_scores[item] is not None and human_consensus[item] is not None
        ),
        key=str,
    )
    judge = [float(judge_scores[item]) for item in shared]
    human = [float(human_consensus[item]) for item in shared]
    reason = _spearman_undefined(judge, human)
    out = {"rho": None, "p_value": None, "shared": len(shared), "reason": reason}
    if reason:
        return out
    result = spearmanr(judge, human)
    return {**out, "rho": float(result.statistic), "p_value": float(result.pvalue)}


def _spearman_undefined(judge, human) -> str | None:
    if len(judge) < MIN_SHARED:
        return f"fewer than {MIN_SHARED} instances scored by both the judge and the listeners: {len(judge)}"
    if len(set(judge)) == 1:
        return "the judge gives every shared instance the same score: ranks are undefined"
    if len(set(human)) == 1:
        return "the listeners' consensus is the same on every shared instance: ranks are undefined"
    return None


def comparison_table(
    *, judges: dict, human: dict | None = None, weak_labels: dict | None = None, resamples: int = 1000, seed: int = 0
) -> dict:
    """One table per dimension: a row per judge and one for the listeners. `judges` maps a judge's
    name to its judge_scores(...); `human` is listening_forms.stance_scores(...) of the same items.
    The listeners' AUROC and EER rank their consensus scores against the weak labels: those the
    judges' instances carry and `weak_labels` (item -> "P"/"N", e.g. the items' own), so that the
    listeners are scored without any judge. Each judge's Spearman is against the listeners' consensus."""
    weak_labels = {
        **{
            row["item"]: row["weak_label"]
            for result in judges.values()
            for dimension in result["per_dimension"].values()
            for row in dimension["per_instance"]
            if row["weak_label"]
        },
        **{item: label for item, label in (weak_labels or {}).items() if label in ("P", "N")},
    }
    consensus = _human_consensus(human)
    names = sorted({name for result in judges.values() for name in result["per_dimension"]} | set(consensus))
    tables = {}
    for dimension in names:
        rows = [
            _judge_row(name, result["per_dimension"][dimension], consensus.get(dimension, {}))
            for name, result in judges.items()
            if dimension in result["per_dimension"]
        ]
        if human is not None and dimension in consensus:
            rows.append(
                _human_row(
                    human["per_dimension"][dimension], consensus[dimension], weak_labels, resamples=resamples, seed=seed
                )
            )
        tables[dimension] = rows
    return {"definition": DISAGREEMENT_DEFINITION, "per_dimension": tables}


def _human_consensus(human: dict | None) -> dict:
    """dimension -> item -> the listeners' consensus score."""
    out: dict[str, dict[str, float]] = {}
    for row in human["per_item"] if human else ():
        out.setdefault(row["dimension"], {})[row["item"]] = row["consensus"]
    return out


def _judge_row(name: str, scores: dict, consensus: dict) -> dict:
    return {
        "row": name,
        "kind": "judge",
        "instances": scores["instances"],
        "failure_rate": scores["failure_rate"],
        "disagreement_rate": scores["disagreement"]["rate"],
        "auroc": scores["auroc"],
        "eer": scores["eer"],
        "spearman": spearman_vs_humans(signed_by_item(scores), consensus) if consensus else None,
    }


def _human_row(summary: dict, consensus: dict, weak_labels: dict, *, resamples: int, seed: int) -> dict:
    ranked = sorted((item for item in consensus if weak_labels.get(item) and consensus[item] is not None), key=str)
    roc = roc_scores(
        [weak_labels[item] == "P" for item in ranked],
        [consensus[item] for item in ranked],
        resamples=resamples,
        seed=seed,
    )
    return {
        "row": "humans",
        "kind": "human",
        "instances": summary["items"],
        "failure_rate": None,
        "disagreement_rate": summary["disagreement"]["rate"],
        "auroc": roc["auroc"],
        "eer": roc["eer"],
        "spearman": None,
        "roc": roc["roc"],
    }
