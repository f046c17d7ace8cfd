"""StanceBench judge scores by hand and against sklearn and scipy. No database."""

import json

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from evaluation.stats.listening_forms import StanceItem, stance_scores
from evaluation.stats.suites.answers import CONFIDENCE_OUT_OF_RANGE, NO_ANSWER, NOT_JSON
from evaluation.stats.suites.stance import (
    JudgeInstance,
    comparison_table,
    judge_scores,
    signed_by_item,
    spearman_vs_humans,
)


def answer(pole, confidence):
    return {"choice": pole, "confidence": confidence}


FENCED = '```json\n{"choice": "N", "confidence": 0.9}\n```'
WARM = [
    # signed 0.7; orders agree
    JudgeInstance("w1", "warm", "P", {"PN": answer("P", 0.8), "NP": '{"choice": "P", "confidence": 0.6}'}),
    # signed -0.7: a fenced answer and the alternative keys
    JudgeInstance("w2", "warm", "N", {"PN": FENCED, "NP": {"answer": "n", "conf": 0.5}}),
    # signed (0.4 - 0.2) / 2 = 0.1; the orders disagree
    JudgeInstance("w3", "warm", "P", {"PN": answer("P", 0.4), "NP": answer("N", 0.2)}),
    # signed (0 - 0.3) / 2 = -0.15; a 0 counts as disagreement
    JudgeInstance("w4", "warm", "N", {"PN": answer("P", 0.0), "NP": answer("N", 0.3)}),
    # both answers fail: no signed probability, left out of the ROC
    JudgeInstance("w5", "warm", "P", {"PN": "P, I'd say", "NP": answer("P", 1.5)}),
    # NP not answered (a failure); signed 0.5 from PN alone; no weak label: left out of the ROC
    JudgeInstance("w6", "warm", None, {"PN": answer("P", 0.5)}),
    # signed 0.1: ties with w3, across the classes
    JudgeInstance("w7", "warm", "N", {"PN": answer("P", 0.1), "NP": answer("P", 0.1)}),
]
RANKED = {"w1": ("P", 0.7), "w2": ("N", -0.7), "w3": ("P", 0.1), "w4": ("N", -0.15), "w7": ("N", 0.1)}


def test_failures_signed_probabilities_and_disagreement_by_hand():
    warm = judge_scores(WARM, resamples=100, seed=0)["per_dimension"]["warm"]

    assert (warm["instances"], warm["answers_expected"], warm["failures"]) == (7, 14, 3)
    assert warm["failure_rate"] == 3 / 14
    assert warm["failure_reasons"] == {CONFIDENCE_OUT_OF_RANGE: 1, NO_ANSWER: 1, NOT_JSON: 1}
    assert warm["missing_answers"] == 1
    assert signed_by_item(warm) == pytest.approx(
        {"w1": 0.7, "w2": -0.7, "w3": 0.1, "w4": -0.15, "w5": None, "w6": 0.5, "w7": 0.1}
    )
    assert warm["disagreement"] == {"instances_with_both_orders": 5, "disagreeing": 2, "rate": 2 / 5}
    assert [row["disagree"] for row in warm["per_instance"]] == [False, False, True, True, None, None, False]
    assert (warm["scored_instances"], warm["left_out_of_roc"], warm["positives"], warm["negatives"]) == (6, 2, 2, 3)


def test_auroc_and_eer_by_hand_with_a_tie_and_against_sklearn():
    warm = judge_scores(WARM, resamples=100, seed=0)["per_dimension"]["warm"]

    # pairs (positive, negative): 0.7 beats all three; 0.1 beats -0.7 and -0.15 and ties 0.1 (one half)
    assert warm["auroc"]["value"] == pytest.approx(5.5 / 6)
    labels, scores = zip(*[(pole == "P", score) for pole, score in RANKED.values()])
    assert warm["auroc"]["value"] == pytest.approx(roc_auc_score(labels, scores))
    # ROC (0, 0), (0, .5), (1/3, 1), (2/3, 1), (1, 1): FPR = FNR 0.6 of the way to (1/3, 1), at 0.2
    assert warm["eer"]["value"] == pytest.approx(0.2)
    assert warm["roc"]["fpr"] == pytest.approx([0, 0, 1 / 3, 2 / 3, 1])
    assert warm["auroc"]["ci95"] is not None and warm["auroc"]["reason"] is None


def test_a_judge_that_fails_every_answer():
    bold = [
        JudgeInstance(f"b{n}", "bold", "P" if n % 2 else "N", {"PN": "no idea", "NP": "```json\n{}\n```"})
        for n in range(6)
    ]
    scores = judge_scores(bold, resamples=100, seed=0)["per_dimension"]["bold"]

    assert (scores["failures"], scores["failure_rate"], scores["scored_instances"]) == (12, 1.0, 0)
    assert scores["auroc"]["value"] is None and scores["eer"]["value"] is None and scores["roc"] is None
    assert scores["auroc"]["reason"] == "no instance has an answer that parses"
    assert scores["disagreement"]["rate"] is None
    json.dumps(scores)


def test_weak_labels_of_one_class_leave_auroc_undefined():
    calm = [JudgeInstance(f"c{n}", "calm", "P", {"PN": answer("P", n / 10), "NP": answer("N", 0.1)}) for n in range(6)]
    scores = judge_scores(calm, resamples=100, seed=0)["per_dimension"]["calm"]
    assert scores["auroc"]["value"] is None and "every scored instance is positive" in scores["auroc"]["reason"]
    assert scores["eer"]["reason"] == scores["auroc"]["reason"] and scores["failure_rate"] == 0

    unlabelled = [JudgeInstance("u", "calm", None, {"PN": answer("P", 0.3), "NP": answer("P", 0.3)})]
    scores = judge_scores(unlabelled, resamples=10, seed=0)["per_dimension"]["calm"]
    assert scores["auroc"]["reason"] == "no scored instance has a weak label"


def test_dimensions_are_scored_apart_and_orders_are_checked():
    both = judge_scores([*WARM, JudgeInstance("x", "cold", "P", {"PN": answer("P", 1)})], resamples=10, seed=0)
    assert list(both["per_dimension"]) == ["cold", "warm"] and both["per_dimension"]["cold"]["failures"] == 1
    with pytest.raises(ValueError, match="PN or NP"):
        judge_scores([JudgeInstance("x", "cold", "P", {"first": answer("P", 1)})], resamples=10, seed=0)


def test_judge_intervals_are_seeded_and_hold_the_estimate():
    rng = np.random.default_rng(7)
    instances = []
    for n in range(60):
        label = "P" if n % 2 else "N"
        lean = 0.25 if label == "P" else -0.25
        poles = ["P" if lean + rng.normal(0, 0.5) > 0 else "N" for _ in range(2)]
        confidences = np.round(rng.random(2), 2).tolist()
        instances.append(
            JudgeInstance(
                f"i{n}", "warm", label, {"PN": answer(poles[0], confidences[0]), "NP": answer(poles[1], confidences[1])}
            )
        )
    first = judge_scores(instances, resamples=300, seed=5)
    assert first == judge_scores(instances, resamples=300, seed=5)
    warm = first["per_dimension"]["warm"]
    for measure in ("auroc", "eer"):
        low, high = warm[measure]["ci95"]
        assert low < warm[measure]["value"] < high
    json.dumps(first)


def test_spearman_on_the_shared_instances_against_scipy():
    judge = {"a": 0.7, "b": -0.7, "c": 0.1, "d": None, "e": 0.3, "g": 0.2}
    human = {"a": 0.5, "b": -0.2, "c": 0.2, "d": 0.4, "e": 0.1, "f": 0.9}
    result = spearman_vs_humans(judge, human)

    expected = spearmanr([0.7, -0.7, 0.1, 0.3], [0.5, -0.2, 0.2, 0.1])  # a, b, c, e
    assert result["shared"] == 4 and result["reason"] is None
    assert result["rho"] == pytest.approx(expected.statistic) and result["p_value"] == pytest.approx(expected.pvalue)
    tied = spearman_vs_humans({"a": 1, "b": 1, "c": 0, "e": 2}, {"a": 0.3, "b": 0.1, "c": 0.1, "e": 0.5})
    assert tied["rho"] == pytest.approx(spearmanr([1, 1, 0, 2], [0.3, 0.1, 0.1, 0.5]).statistic)


def test_spearman_undefined_with_the_reason():
    few = spearman_vs_humans({"a": 0.1, "b": 0.2}, {"a": 0.3, "b": 0.1, "c": 0.4})
    assert few["rho"] is None and few["shared"] == 2 and "fewer than 3" in few["reason"]
    flat_judge = spearman_vs_humans({"a": 0.5, "b": 0.5, "c": 0.5}, {"a": 0.1, "b": 0.2, "c": 0.3})
    assert flat_judge["rho"] is None and "the judge gives every shared instance the same score" in flat_judge["reason"]
    flat_human = spearman_vs_humans({"a": 0.1, "b": 0.2, "c": 0.3}, {"a": 0.5, "b": 0.5, "c": 0.5})
    assert flat_human["rho"] is None and "listeners' consensus is the same" in flat_human["reason"]


HUMANS = [
    StanceItem("w1", "warm", (("P", 0.9, "PN"), ("P", 0.5, "NP"))),  # consensus 0.7
    StanceItem("w2", "warm", (("N", 0.6, "PN"), ("N", 0.8, "NP"))),  # -0.7
    StanceItem("w3", "warm", (("P", 0.2, "PN"), ("N", 0.4, "NP"))),  # -0.1, orders disagree
    StanceItem("w4", "warm", (("N", 0.5, "PN"),)),  # -0.5
    StanceItem("w7", "warm", (("P", 0.3, "PN"), ("P", 0.1, "NP"))),  # 0.2
]


def test_comparison_table_one_row_per_judge_and_the_listeners():
    judge = judge_scores(WARM, resamples=100, seed=0)
    human = stance_scores(HUMANS)
    table = comparison_table(judges={"judge-1": judge}, human=human, resamples=100, seed=0)

    judge_row, human_row = table["per_dimension"]["warm"]
    assert (judge_row["row"], judge_row["kind"], human_row["row"], human_row["kind"]) == (
        "judge-1",
        "judge",
        "humans",
        "human",
    )
    assert judge_row["failure_rate"] == 3 / 14 and judge_row["disagreement_rate"] == 2 / 5
    assert judge_row["auroc"] == judge["per_dimension"]["warm"]["auroc"]
    consensus = {row["item"]: row["consensus"] for row in human["per_item"]}
    assert judge_row["spearman"] == spearman_vs_humans(signed_by_item(judge["per_dimension"]["warm"]), consensus)
    assert judge_row["spearman"]["shared"] == 5  # w5 has no judge score, w6 no listeners
    # the listeners' consensus against the weak labels the judge's instances carry
    weak = {"w1": 1, "w2": 0, "w3": 1, "w4": 0, "w7": 0}
    assert human_row["auroc"]["value"] == pytest.approx(
        roc_auc_score(list(weak.values()), [consensus[i] for i in weak])
    )
    assert human_row["disagreement_rate"] == 1 / 4 and human_row["failure_rate"] is None
    assert human_row["instances"] == 5
    json.dumps(table)


def test_comparison_table_without_listeners():
    table = comparison_table(judges={"judge-1": judge_scores(WARM, resamples=10, seed=0)})
    (row,) = table["per_dimension"]["warm"]
    assert row["spearman"] is None
