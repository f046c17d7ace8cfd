"""The form report in long form and as CSV. No database."""

import csv
import io
import json

from evaluation.reports.agreement_format import report_json
from evaluation.reports.listening_form_format import COLUMNS, report_csv, report_rows
from evaluation.stats.listening_forms import (
    ChoiceItem,
    PairItem,
    StanceItem,
    choice_scores,
    form_agreement,
    pairwise_scores,
    stance_scores,
)


def report() -> dict:
    choices = [ChoiceItem(f"c{n}", n % 2, (0, 1, n % 2), {"half": "first" if n < 3 else "second"}) for n in range(6)]
    pairs = [PairItem("p1", ("a", "b", "a")), PairItem("p2", ("none", "a", "a"))]
    stances = [StanceItem("s1", "warmth", (("P", 0.5, "PN"), ("N", 0.25, "NP")))]
    return {
        "items": 9,
        "answers": 25,
        "participants": 3,
        "answers_left_out_rejected": 0,
        "agreement": form_agreement(choices=choices, pairs=pairs, stances=stances),
        "single_choice": choice_scores(choices),
        "pairwise": pairwise_scores(pairs),
        "stance": stance_scores(stances),
    }


def test_the_stored_json_gives_the_same_rows_as_the_report_itself():
    computed = report()
    stored = json.loads(report_json(computed))  # keys sorted, floats rounded to 10 decimals

    assert list(stored["agreement"]) == ["pairwise", "single_choice", "stance"]  # not form_agreement's order
    assert _rounded(report_rows(stored)) == _rounded(report_rows(computed))
    assert [row[1] for row in report_rows(stored) if row[0] == "agreement"] == ["single_choice", "pairwise", "stance"]


def test_the_csv_has_one_measure_a_row_under_the_columns():
    rows = list(csv.reader(io.StringIO(report_csv(report()))))

    assert rows[0] == COLUMNS
    assert rows[1] == ["single_choice", "all", "", "accuracy", "0.6666666666666666", *rows[1][5:7], "18"]
    assert {row[1] for row in rows if row[0] == "single_choice"} >= {"half=first", "half=second"}


def test_stance_rows_say_how_many_items_lack_one_order():
    stances = [
        StanceItem("s1", "warmth", (("P", 0.5, "PN"), ("P", 0.25, "NP"))),
        StanceItem("s2", "warmth", (("P", 0.5, "PN"),)),
    ]
    stored = json.loads(report_json({"agreement": {}, "stance": stance_scores(stances)}))

    rows = {row[3]: row for row in report_rows(stored) if row[0] == "stance" and not row[2]}
    assert rows["pole_order_disagreement"][4] == 0.0 and rows["pole_order_disagreement"][7] == 1
    assert rows["items_lacking_one_order"][4] == 1 and rows["items_lacking_one_order"][7] == 2  # of 2 items


def test_a_report_stored_before_the_count_has_no_row_for_it():
    stored = json.loads(
        report_json({"agreement": {}, "stance": stance_scores([StanceItem("s", "w", (("P", 1, "PN"),))])})
    )
    del stored["stance"]["per_dimension"]["w"]["disagreement"]["items_lacking_one_order"]

    assert [row[3] for row in report_rows(stored) if row[0] == "stance" and not row[2]] == [
        "signed_score",
        "pole_order_disagreement",
    ]


def _rounded(rows):
    return [[round(cell, 9) if isinstance(cell, float) else cell for cell in row] for row in rows]
