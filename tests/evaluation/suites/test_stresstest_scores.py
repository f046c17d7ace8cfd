"""StressTest scores of systems, by hand, and beside the human listening-form scores. No database."""

import json
import math

import numpy as np
import pytest
from sklearn.metrics import precision_recall_fscore_support

from evaluation.stats.listening_forms import ChoiceItem, choice_scores
from evaluation.stats.suites.answers import NAMES_NO_OPTION, NAMES_NO_WORD, NAMES_SEVERAL_OPTIONS
from evaluation.stats.suites.stresstest import (
    SystemChoiceItem,
    SystemMarkedItem,
    comparison_table,
    system_ssd,
    system_ssr,
)

Z = 1.959963984540054
OPTIONS = ("Ann went, not Bob", "Bob went, not Ann")
CONTRASTIVE, EMPHATIC = {"category": "contrastive"}, {"category": "emphatic"}
SSR = [
    SystemChoiceItem("s1", 0, OPTIONS, 0, CONTRASTIVE),  # right
    SystemChoiceItem("s2", 1, OPTIONS, "B", CONTRASTIVE),  # right (letter label)
    SystemChoiceItem("s3", 0, OPTIONS, "He meant bob went, not ann", EMPHATIC),  # wrong (names option 1)
    SystemChoiceItem("s4", 1, OPTIONS, "I cannot tell", EMPHATIC),  # wrong, and a failure
    SystemChoiceItem("s5", 0, OPTIONS, "ann went, not bob or bob went, not ann", EMPHATIC),  # wrong, a failure
    SystemChoiceItem("s6", None, OPTIONS, 0, EMPHATIC),  # no gold: left out
]


def wilson_by_hand(successes, trials):
    p = successes / trials
    centre = (p + Z**2 / (2 * trials)) / (1 + Z**2 / trials)
    half = Z / (1 + Z**2 / trials) * math.sqrt(p * (1 - p) / trials + Z**2 / (4 * trials**2))
    return [centre - half, centre + half]


def test_ssr_accuracy_counts_an_answer_naming_no_option_as_wrong_and_as_a_failure():
    scores = system_ssr(SSR)

    assert (scores["items"], scores["items_without_gold"]) == (5, 1)
    assert (scores["accuracy"]["successes"], scores["accuracy"]["trials"]) == (2, 5)
    assert scores["accuracy"]["value"] == 2 / 5
    assert scores["accuracy"]["ci95"] == pytest.approx(wilson_by_hand(2, 5), abs=1e-12)
    assert (scores["failures"], scores["failure_rate"]) == (2, 2 / 5)
    assert scores["failure_reasons"] == {NAMES_NO_OPTION: 1, NAMES_SEVERAL_OPTIONS: 1}
    assert [row["answer"] for row in scores["per_item"]] == [0, 1, 1, None, None]
    assert [row["correct"] for row in scores["per_item"]] == [True, True, False, False, False]


def test_ssr_per_category():
    per_category = system_ssr(SSR)["per_category"]

    assert list(per_category) == ["contrastive", "emphatic"]
    contrastive, emphatic = per_category["contrastive"], per_category["emphatic"]
    assert (contrastive["accuracy"]["successes"], contrastive["accuracy"]["trials"], contrastive["failures"]) == (
        2,
        2,
        0,
    )
    assert (emphatic["accuracy"]["successes"], emphatic["accuracy"]["trials"], emphatic["failures"]) == (0, 3, 2)
    assert emphatic["accuracy"]["ci95"] == pytest.approx(wilson_by_hand(0, 3), abs=1e-12)
    assert emphatic["failure_rate"] == 2 / 3


def test_ssr_without_items():
    scores = system_ssr([])
    assert scores["accuracy"]["value"] is None and scores["failure_rate"] is None and scores["per_category"] == {}


WORDS = ("I", "never", "said", "she", "stole", "it")
GOLD = (0, 1, 0, 0, 1, 0)
SSD = [
    SystemMarkedItem("d1", GOLD, WORDS, [1, 2]),  # tp 1, fp 1, fn 1
    SystemMarkedItem("d2", GOLD, WORDS, "stole"),  # tp 1, fp 0, fn 1
    SystemMarkedItem("d3", GOLD, WORDS, "no idea"),  # a failure: predicts nothing, tp 0, fp 0, fn 2
    SystemMarkedItem("d4", None, WORDS, [1]),  # no gold: left out
]


def test_ssd_pooled_and_item_mean_by_hand():
    scores = system_ssd(SSD)

    assert (scores["items"], scores["items_without_gold"]) == (3, 1)
    pooled = scores["pooled"]
    assert (pooled["tp"], pooled["fp"], pooled["fn"]) == (2, 1, 4)
    assert pooled["precision"] == 2 / 3 and pooled["recall"] == 2 / 6 and pooled["f1"] == 4 / 9
    mean = scores["item_mean"]
    assert mean["precision"] == pytest.approx((1 / 2 + 1) / 2) and mean["precision_n"] == 2  # d3 marked nothing
    assert mean["recall"] == pytest.approx((1 / 2 + 1 / 2 + 0) / 3) and mean["recall_n"] == 3
    assert mean["f1"] == pytest.approx((1 / 2 + 2 / 3 + 0) / 3) and mean["f1_n"] == 3
    assert (scores["failures"], scores["failure_rate"], scores["failure_reasons"]) == (1, 1 / 3, {NAMES_NO_WORD: 1})
    assert [row["predicted"] for row in scores["per_item"]] == [[1, 2], [4], []]


def test_ssd_pooled_matches_sklearn_over_every_word():
    predicted = [[0, 1, 1, 0, 0, 0], [0, 0, 0, 0, 1, 0], [0] * 6]  # d3's failure predicts nothing
    precision, recall, f1, _ = precision_recall_fscore_support(np.tile(GOLD, 3), np.ravel(predicted), average="binary")
    pooled = system_ssd(SSD)["pooled"]
    assert (pooled["precision"], pooled["recall"], pooled["f1"]) == pytest.approx((precision, recall, f1))


def test_ssd_gold_and_sentence_must_have_the_same_words():
    with pytest.raises(ValueError, match="d9"):
        system_ssd([SystemMarkedItem("d9", (1, 0), WORDS, [0])])


HUMANS = [
    ChoiceItem("s1", 0, (0, 0, 1)),  # 2 right; majority right
    ChoiceItem("s2", 1, (1, 1, 1)),  # 3 right; majority right
    ChoiceItem("s3", 0, (0, 1)),  # 1 right; a tie: majority wrong
    ChoiceItem("s4", 1, (0, 0, 1)),  # 1 right; majority wrong
    ChoiceItem("s5", 0, (0, 0, 0)),  # answered by humans and system A only
    ChoiceItem("s7", 0, (0,)),  # answered by humans only
]


def test_comparison_table_on_the_items_every_row_answered():
    system_b = system_ssr(
        [
            SystemChoiceItem(f"s{n}", gold, OPTIONS, gold, meta)
            for n, gold, meta in [(1, 0, CONTRASTIVE), (2, 1, CONTRASTIVE), (3, 0, EMPHATIC), (4, 1, EMPHATIC)]
        ]
    )
    table = comparison_table(human=choice_scores(HUMANS), systems={"A": system_ssr(SSR), "B": system_b})

    assert table["items"] == 4 and table["items_left_out"] == ["s5", "s7"]
    humans, a, b = table["overall"]
    assert (humans["row"], humans["kind"], a["row"], b["row"]) == ("humans", "human", "A", "B")
    assert (humans["accuracy"]["successes"], humans["accuracy"]["trials"]) == (7, 11)
    assert humans["accuracy"]["ci95"] == pytest.approx(wilson_by_hand(7, 11), abs=1e-12)
    assert (humans["majority_vote_accuracy"]["successes"], humans["majority_vote_accuracy"]["trials"]) == (2, 4)
    assert (a["accuracy"]["successes"], a["accuracy"]["trials"], a["failures"]) == (2, 4, 1)
    assert (b["accuracy"]["successes"], b["failures"], b["majority_vote_accuracy"]) == (4, 0, None)

    contrastive, emphatic = table["per_category"]["contrastive"], table["per_category"]["emphatic"]
    assert (contrastive[0]["accuracy"]["successes"], contrastive[0]["accuracy"]["trials"]) == (5, 6)
    assert contrastive[0]["majority_vote_accuracy"]["value"] == 1.0
    assert (emphatic[0]["accuracy"]["successes"], emphatic[0]["accuracy"]["trials"]) == (2, 5)
    assert (emphatic[1]["accuracy"]["value"], emphatic[1]["failures"], emphatic[2]["accuracy"]["value"]) == (0, 1, 1)
    json.dumps(table)


def test_comparison_table_of_humans_alone_has_no_categories():
    table = comparison_table(human=choice_scores(HUMANS), systems={})
    assert table["items"] == 6 and table["per_category"] == {} and len(table["overall"]) == 1


def test_results_are_json():
    json.dumps(system_ssr(SSR))
    json.dumps(system_ssd(SSD))
