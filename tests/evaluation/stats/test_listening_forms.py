"""Listening-form scores by hand and against reference implementations. No database."""

import json
import math

import numpy as np
import pytest
from scipy.stats import binomtest
from scipy.stats import t as student_t
from sklearn.metrics import precision_recall_fscore_support
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from evaluation.stats.listening_forms import (
    TIE_POLICY,
    ChoiceItem,
    MarkedItem,
    PairItem,
    RatedItem,
    StanceItem,
    breakdown_keys,
    choice_scores,
    form_agreement,
    majority_choice,
    pairwise_scores,
    rating_scores,
    stance_scores,
    stressed_word_scores,
    wilson,
)

Z = 1.959963984540054


def wilson_by_hand(successes, trials):
    p = successes / trials
    centre = (p + Z**2 / (2 * trials)) / (1 + Z**2 / trials)
    half = Z / (1 + Z**2 / trials) * math.sqrt(p * (1 - p) / trials + Z**2 / (4 * trials**2))
    return [centre - half, centre + half]


CHOICES = [
    ChoiceItem("i1", 0, (0, 0, 1), {"stress_category": "contrastive"}),  # 2 right; majority 0: right
    ChoiceItem("i2", 1, (0, 0, 0), {"stress_category": "contrastive"}),  # 0 right; majority 0: wrong
    ChoiceItem("i3", 2, (0, 1, 2), {"stress_category": "emphatic"}),  # 1 right; three-way tie: wrong
    ChoiceItem("i4", 1, (1, 1, 1), {"stress_category": "emphatic"}),  # 3 right; majority 1: right
    ChoiceItem("no-gold", None, (0, 1), {"stress_category": "emphatic"}),
]


def test_choice_accuracy_and_majority_vote_by_hand():
    scores = choice_scores(CHOICES)

    assert scores["accuracy"]["value"] == 6 / 12 and scores["accuracy"]["trials"] == 12
    assert scores["accuracy"]["ci95"] == pytest.approx(wilson_by_hand(6, 12), abs=1e-12)
    assert scores["majority_vote_accuracy"]["value"] == 2 / 4
    assert scores["majority_vote_accuracy"]["ci95"] == pytest.approx(wilson_by_hand(2, 4), abs=1e-12)
    assert (scores["items"], scores["tied_items"], scores["items_without_gold"]) == (4, 1, 1)
    assert scores["tie_policy"] == TIE_POLICY and "incorrect" in TIE_POLICY
    assert [row["majority"] for row in scores["per_item"]] == [0, 0, None, 1]


def test_choice_breakdown_by_metadata():
    by = choice_scores(CHOICES)["by"]

    assert list(by) == ["stress_category"]
    contrastive, emphatic = by["stress_category"]["contrastive"], by["stress_category"]["emphatic"]
    assert (contrastive["accuracy"]["successes"], contrastive["accuracy"]["trials"]) == (2, 6)
    assert (emphatic["accuracy"]["successes"], emphatic["accuracy"]["trials"]) == (4, 6)
    assert contrastive["majority_vote_accuracy"]["value"] == emphatic["majority_vote_accuracy"]["value"] == 0.5
    assert emphatic["tied_items"] == 1


def test_majority_ties_and_identifier_like_keys():
    assert majority_choice([1, 0, 1]) == 1
    assert majority_choice([1, 0]) is None and majority_choice([]) is None
    metadata = [{"id": n, "group": n % 2, "note": "same", "words": [1]} for n in range(6)]
    assert breakdown_keys(metadata) == ["group"]  # "id" names every item, "note" one value, "words" no scalar


def test_wilson_matches_the_formula_and_handles_no_trials():
    assert wilson(7, 10)["ci95"] == pytest.approx(wilson_by_hand(7, 10), abs=1e-12)
    assert wilson(0, 0) == {"value": None, "successes": 0, "trials": 0, "ci95": None}


MARKED = [
    MarkedItem("s1", (0, 1, 0, 0), (("p1", (0, 1, 0, 0)), ("p2", (0, 1, 1, 0)))),
    MarkedItem("s2", (1, 0, 0), (("p1", (0, 0, 0)), ("p2", (2, 0, 1)))),  # level 2 counts as marked
]


def test_stressed_words_pooled_item_mean_and_participant_mean_by_hand():
    scores = stressed_word_scores(MARKED)

    # pooled: tp 3, fp 2, fn 1
    assert scores["pooled"]["precision"] == pytest.approx(3 / 5)
    assert scores["pooled"]["recall"] == pytest.approx(3 / 4)
    assert scores["pooled"]["f1"] == pytest.approx(2 / 3)
    # items: s1 tp 2 fp 1 fn 0; s2 tp 1 fp 1 fn 1
    assert scores["item_mean"]["precision"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert scores["item_mean"]["recall"] == pytest.approx((1 + 1 / 2) / 2)
    assert scores["item_mean"]["f1"] == pytest.approx((4 / 5 + 1 / 2) / 2)
    # participants: p1 tp 1 fp 0 fn 1; p2 tp 2 fp 2 fn 0
    assert scores["participant_mean"]["precision"] == pytest.approx((1 + 1 / 2) / 2)
    assert scores["participant_mean"]["f1"] == pytest.approx(2 / 3)
    json.dumps(scores)  # plain numbers only


def test_pooled_stressed_words_match_scikit_learn():
    gold = [word for item in MARKED for _ in item.markings for word in item.gold]
    marked = [int(level >= 1) for item in MARKED for _, levels in item.markings for level in levels]
    precision, recall, f1, _ = precision_recall_fscore_support(gold, marked, average="binary")

    pooled = stressed_word_scores(MARKED)["pooled"]

    assert (pooled["precision"], pooled["recall"], pooled["f1"]) == pytest.approx((precision, recall, f1))


def test_stressed_words_undefined_precision_is_left_out_of_the_mean():
    items = [MarkedItem("a", (0, 1), (("p", (0, 0)),)), MarkedItem("b", (1, 0), (("p", (1, 0)),))]

    scores = stressed_word_scores(items)

    assert scores["per_item"][0]["precision"] is None and scores["per_item"][0]["f1"] == 0
    assert scores["item_mean"]["precision"] == 1.0 and scores["item_mean"]["precision_n"] == 1
    with pytest.raises(ValueError, match="2 words"):
        stressed_word_scores([MarkedItem("c", (0, 1, 0), (("p", (0, 1)),))])


def test_mean_opinion_score_with_t_interval_per_item_and_system():
    items = [
        RatedItem("r1", (3, 4, 5, 4, 4), {"system": "tts-a"}, scale=(1, 5)),
        RatedItem("r2", (2, 2, 5, 1), {"system": "tts-b"}, scale=(1, 5)),
        RatedItem("r3", (4,), {"system": "tts-a"}, scale=(1, 5)),
    ]

    scores = rating_scores(items)

    first = scores["per_item"][0]
    sd = np.std([3, 4, 5, 4, 4], ddof=1)
    assert first["mean"] == 4 and first["ci95"] == pytest.approx(
        list(student_t.interval(0.95, 4, 4, sd / math.sqrt(5)))
    )
    assert first["scale"] == [1, 5] and first["ci95_undefined"] is None
    assert scores["per_item"][1]["ci95"] is None  # four ratings: too few for an interval, and said so
    assert scores["per_item"][1]["ci95_undefined"] == "too few ratings for an interval: 4 (needs at least 5)"
    system_a = scores["per_system"]["tts-a"]
    values = [3, 4, 5, 4, 4, 4]
    expected = student_t.interval(0.95, 5, np.mean(values), np.std(values, ddof=1) / math.sqrt(6))
    assert system_a["mean"] == 4 and system_a["n"] == 6 and system_a["ci95"] == pytest.approx(list(expected))
    assert scores["per_system"]["tts-b"]["mean"] == 2.5


def test_a_mos_interval_stays_on_the_rating_scale():
    near_the_top = RatedItem("r", (5, 5, 5, 5, 5, 4, 5, 1), scale=(1, 5))
    unknown_scale = RatedItem("s", (5, 5, 5, 5, 5, 4, 5, 1))

    scores = rating_scores([near_the_top, unknown_scale])

    bounded, plain = scores["per_item"][0]["ci95"], scores["per_item"][1]["ci95"]
    assert plain[1] > 5 and bounded == [plain[0], 5.0]  # the t interval cut at the top of the scale
    assert scores["per_system"][""]["ci95"][1] > 5  # a system with an item of unknown scale is not cut


def test_pairwise_preference_excludes_ties_from_the_binomial_test():
    items = [
        PairItem("q1", ("a",) * 5 + ("none",) * 2, {"comparison": "x"}),
        PairItem("q2", ("a", "a", "a", "b", "b", "none"), {"comparison": "y"}),
    ]

    scores = pairwise_scores(items, by=["comparison"])  # two items: no automatic breakdown

    overall = scores["overall"]
    assert (overall["a"], overall["b"], overall["no_preference"]) == (8, 2, 3)
    assert overall["prefer_a"]["value"] == 0.8
    assert overall["p_value"] == pytest.approx(2 * (45 + 10 + 1) / 1024)  # exact: P(X >= 8) twice
    assert overall["p_value"] == pytest.approx(binomtest(8, 10, 0.5).pvalue)
    assert scores["per_item"][0]["p_value"] == pytest.approx(2 / 32)
    assert scores["by"]["comparison"]["y"]["prefer_a"]["value"] == 0.6
    assert pairwise_scores([PairItem("t", ("none",))])["overall"]["p_value"] is None


def test_stance_signed_score_over_both_orders_and_disagreement():
    items = [
        StanceItem("w1", "warmth", (("P", 0.8, "PN"), ("P", 0.6, "PN"), ("N", 0.4, "NP"))),  # 0.7 vs -0.4
        StanceItem("w2", "warmth", (("P", 1.0, "PN"), ("P", 0.5, "NP"))),  # agree
        StanceItem("w3", "warmth", (("N", 0.2, "PN"),)),  # one order only
        StanceItem("p1", "power", (("P", 0.5, "PN"), ("N", 0.5, "PN"), ("P", 0.3, "NP"))),  # 0 vs 0.3
    ]

    scores = stance_scores(items)

    rows = {row["item"]: row for row in scores["per_item"]}
    assert rows["w1"]["consensus"] == pytest.approx((0.7 - 0.4) / 2)  # orders weigh equally
    assert rows["w1"]["disagree"] and not rows["w2"]["disagree"] and not rows["w3"]["both_orders"]
    warmth = scores["per_dimension"]["warmth"]
    assert warmth["score"]["mean"] == pytest.approx((0.15 + 0.75 - 0.2) / 3)
    assert warmth["disagreement"] == {
        "items_with_both_orders": 2,
        "disagreeing": 1,
        "rate": 0.5,
        "items_lacking_one_order": 1,  # w3
    }
    assert scores["per_dimension"]["power"]["disagreement"]["rate"] == 1.0  # a zero mean has no pole
    assert scores["per_dimension"]["power"]["disagreement"]["items_lacking_one_order"] == 0
    assert "PN" in scores["definition"]


def test_fleiss_kappa_matches_statsmodels_for_equal_listener_counts():
    choices = [
        ChoiceItem(f"c{n}", 0, answers)
        for n, answers in enumerate([(0, 0, 1), (1, 1, 1), (0, 1, 2), (2, 2, 2), (0, 0, 0), (1, 2, 1)])
    ]

    agreement = form_agreement(choices=choices)["single_choice"]

    table, _ = aggregate_raters(np.array([item.choices for item in choices]))
    assert agreement["kappa"] == pytest.approx(statsmodels_fleiss(table, method="fleiss"))
    assert agreement["units"] == 6 and agreement["listeners_per_unit"] == [3, 3]
    assert agreement["ci95"][0] < agreement["kappa"] < agreement["ci95"][1]


def test_fleiss_kappa_per_type_and_words_as_units():
    stances = [
        StanceItem("s", "warmth", (("P", 1, "PN"), ("P", 1, "NP"))),
        StanceItem("t", "warmth", (("N", 1, "PN"), ("P", 1, "NP"))),
    ]
    pairs = [PairItem("q", ("a", "a")), PairItem("r", ("b", "a"))]

    agreement = form_agreement(pairs=pairs, stances=stances, markings=MARKED)

    assert set(agreement) == {"pairwise", "stance", "stressed_words"}
    assert agreement["stressed_words"]["units"] == 7  # 4 + 3 words
    words = [
        [int(v >= 1) for v in (a[w], b[w])]
        for item in MARKED
        for (_, a), (_, b) in [item.markings]
        for w in range(len(item.gold))
    ]
    table, _ = aggregate_raters(np.array(words))
    assert agreement["stressed_words"]["kappa"] == pytest.approx(statsmodels_fleiss(table, method="fleiss"))
    one_category = form_agreement(pairs=[PairItem("q", ("a", "a"))])["pairwise"]
    assert one_category["kappa"] is None and "one category" in one_category["reason"]


def test_accuracy_chart_draws_overall_and_per_category_intervals():
    from evaluation.reports.listening_form_charts import accuracy_chart

    report = {
        "accuracy": {"value": 0.75, "ci95": [0.6, 0.86]},
        "majority_vote_accuracy": {"value": 0.8, "ci95": [0.5, 0.94]},
        "by": {
            "stress_category": {
                "contrastive": {
                    "accuracy": {"value": 0.5, "ci95": [0.3, 0.7]},
                    "majority_vote_accuracy": {"value": None, "ci95": None},
                },
            }
        },
    }

    svg = accuracy_chart(report)

    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "all items" in svg and "stress_category=contrastive" in svg
    assert svg.count('r="3.5"') == 3 and "undefined" in svg  # three points; the fourth is undefined
