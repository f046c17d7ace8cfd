"""Answers as text for the admin (annotation/admin/answer_text.py): no database needed."""

from annotation.admin.answer_text import form_answer, marked_words
from annotation.models import ListeningFormItem


def test_levels_are_superscripts_on_the_words():
    assert marked_words(["I", "did", "not", "say"], [0, 2, 0, 1]) == "I did² not say¹"


def test_levels_that_do_not_line_up_with_the_words_are_shown_alone():
    assert marked_words(["I", "did", "not"], [0, 2]) == "0 2"


def test_a_form_answer_the_item_no_longer_fits_is_shown_as_stored():
    item = ListeningFormItem(external_id="q1", item_type=ListeningFormItem.Type.SINGLE_CHOICE, options=["yes"])

    assert form_answer(item, response={"choice": 3}, levels=[], words=[]) == 'q1: {"choice": 3}'


def test_a_rating_with_its_own_values_names_the_label():
    item = ListeningFormItem(
        external_id="mos",
        item_type=ListeningFormItem.Type.RATING,
        options=["low", "high"],
        settings={"values": [0, 10]},
    )

    assert form_answer(item, response={"value": 10.0}, levels=[], words=[]) == "mos: 10 – high"
