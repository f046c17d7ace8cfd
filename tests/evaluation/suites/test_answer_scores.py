"""Reading systems' raw answers: options, stressed words, stance JSON. No database."""

import pytest

from evaluation.stats.suites.answers import (
    CHOICE_NOT_A_POLE,
    CONFIDENCE_NOT_A_NUMBER,
    CONFIDENCE_OUT_OF_RANGE,
    INDEX_OUT_OF_RANGE,
    NAMES_NO_OPTION,
    NAMES_NO_WORD,
    NAMES_SEVERAL_OPTIONS,
    NO_ANSWER,
    NO_CHOICE,
    NO_CONFIDENCE,
    NOT_A_STRING_OR_NUMBER,
    NOT_AN_OBJECT,
    NOT_JSON,
    NOT_WORDS,
    WORD_INDEX_OUT_OF_RANGE,
    ParsedChoice,
    parse_choice,
    parse_stance,
    parse_stressed,
)

OPTIONS = ("Ann went, not Bob", "Bob went, not Ann")
WORDS = ("I", "never", "said", "she", "stole", "it.")


@pytest.mark.parametrize(
    ("raw", "index"),
    [(0, 0), (1, 1), ("1", 1), (" 0 ", 0), (1.0, 1)],
)
def test_an_index_names_its_option(raw, index):
    assert parse_choice(raw, OPTIONS) == ParsedChoice(index, None)


@pytest.mark.parametrize(
    ("raw", "index"),
    [("A", 0), ("b", 1), ("(a)", 0), ("Option B", 1), ("B.", 1), ("b)", 1), ("Answer: A", 0)],
)
def test_a_letter_label_names_its_option(raw, index):
    assert parse_choice(raw, OPTIONS) == ParsedChoice(index, None)


@pytest.mark.parametrize(
    ("raw", "index"),
    [
        ("ann went, not bob", 0),  # equal, casefolded
        ("  Bob   went, not ANN. ", 1),  # whitespace collapsed, trailing punctuation ignored
        ("He meant that Ann went, not Bob.", 0),  # contains one option's text
        ("I think: bob went, not ann!", 1),
    ],
)
def test_text_matching_an_option(raw, index):
    assert parse_choice(raw, OPTIONS) == ParsedChoice(index, None)


@pytest.mark.parametrize(
    ("raw", "failure"),
    [
        (2, INDEX_OUT_OF_RANGE),
        (-1, INDEX_OUT_OF_RANGE),
        ("7", INDEX_OUT_OF_RANGE),
        ("C", INDEX_OUT_OF_RANGE),  # a third letter for two options
        (0.5, INDEX_OUT_OF_RANGE),
        (True, NOT_A_STRING_OR_NUMBER),  # a bool is no index
        (None, NO_ANSWER),  # an item the system left out
        ([0], NOT_A_STRING_OR_NUMBER),
        ({"answer": 0}, NOT_A_STRING_OR_NUMBER),
        ("", NAMES_NO_OPTION),
        ("I cannot tell from the audio", NAMES_NO_OPTION),
        ("Either Ann went, not Bob or Bob went, not Ann", NAMES_SEVERAL_OPTIONS),
    ],
)
def test_answers_that_name_no_single_option(raw, failure):
    assert parse_choice(raw, OPTIONS) == ParsedChoice(None, failure)


def test_the_longer_of_two_nested_options_is_the_one_named():
    options = ("Ann went", "Ann went home")
    assert parse_choice("I think Ann went home.", options).option == 1
    assert parse_choice("Ann went to school", options).option == 0


def test_an_option_is_found_as_whole_words_only():
    assert parse_choice("not sure", ("no", "yes")).failure == NAMES_NO_OPTION
    assert parse_choice("the answer is no", ("no", "yes")).option == 0


def test_an_option_that_reads_like_a_label_is_itself():
    assert parse_choice("B", ("B", "A")).option == 0
    assert parse_choice("1", ("2", "1")).option == 1


@pytest.mark.parametrize(
    ("raw", "indices"),
    [
        ([2, 4], (2, 4)),
        ([4, 2, 2], (2, 4)),  # sorted, each word once
        ([], ()),  # "nothing stressed" is an answer
        ("[1, 3]", (1, 3)),  # a JSON list in a text
        ({"stressed": [5]}, (5,)),
        (["Never", "stole!"], (1, 4)),
        ("NEVER and STOLE", (1, 4)),  # "and" is no word of the sentence: ignored
        ("it", (5,)),  # the sentence's "it." matches without its punctuation
    ],
)
def test_stressed_words_named(raw, indices):
    assert parse_stressed(raw, WORDS) == (indices, None)


def test_a_named_word_that_occurs_twice_names_both():
    assert parse_stressed("the", ("the", "cat", "saw", "the", "dog")) == ((0, 3), None)


@pytest.mark.parametrize(
    ("raw", "failure"),
    [
        (None, NO_ANSWER),
        ([6], WORD_INDEX_OUT_OF_RANGE),
        ([-1], WORD_INDEX_OUT_OF_RANGE),
        ([1, "stole"], NOT_WORDS),
        ([True], NOT_WORDS),
        (3.5, NOT_WORDS),
        ({"words": [1]}, NOT_WORDS),
        ("nothing here", NAMES_NO_WORD),
        ("", NAMES_NO_WORD),
    ],
)
def test_stressed_answers_that_cannot_be_read(raw, failure):
    assert parse_stressed(raw, WORDS) == (None, failure)


@pytest.mark.parametrize(
    ("raw", "pole", "confidence", "signed"),
    [
        ({"choice": "P", "confidence": 0.8}, "P", 0.8, 0.8),
        ('{"answer": "n", "conf": 0.25, "evidence": ["flat pitch"]}', "N", 0.25, -0.25),
        ('Here is my answer:\n```json\n{"pole": "p", "confidence": 1}\n```\nDone.', "P", 1.0, 1.0),
        ('```\n{"choice": "N", "confidence": 0}\n```', "N", 0.0, 0.0),
    ],
)
def test_stance_answers_that_parse(raw, pole, confidence, signed):
    parsed = parse_stance(raw)
    assert (parsed.pole, parsed.confidence, parsed.failure, parsed.signed) == (pole, confidence, None, signed)


@pytest.mark.parametrize(
    ("raw", "failure"),
    [
        (None, NO_ANSWER),
        ('{"choice": "P", "confidence": 0.8', NOT_JSON),
        ("P, fairly sure", NOT_JSON),
        ("```json\n{choice: P}\n```", NOT_JSON),
        ("[1, 2]", NOT_AN_OBJECT),
        (0.8, NOT_AN_OBJECT),
        ({"confidence": 0.8}, NO_CHOICE),
        ({"choice": "maybe", "confidence": 0.8}, CHOICE_NOT_A_POLE),
        ({"choice": 1, "confidence": 0.8}, CHOICE_NOT_A_POLE),
        ({"choice": "P"}, NO_CONFIDENCE),
        ({"choice": "P", "confidence": "0.8"}, CONFIDENCE_NOT_A_NUMBER),
        ({"choice": "P", "confidence": True}, CONFIDENCE_NOT_A_NUMBER),
        ('{"choice": "P", "confidence": NaN}', CONFIDENCE_NOT_A_NUMBER),
        ({"choice": "P", "confidence": 1.5}, CONFIDENCE_OUT_OF_RANGE),
        ({"choice": "N", "confidence": -0.1}, CONFIDENCE_OUT_OF_RANGE),
        ('{"choice": "N", "confidence": Infinity}', CONFIDENCE_OUT_OF_RANGE),
    ],
)
def test_stance_structural_failures(raw, failure):
    assert parse_stance(raw) == (None, None, failure)
    assert parse_stance(raw).signed is None


def test_an_answer_nested_too_deep_is_a_failure_not_a_crash():
    deep = "[" * 50_000 + "]" * 50_000
    assert parse_stressed(deep, WORDS).failure is not None
    assert parse_stance(deep).failure == NOT_JSON
    assert parse_stance(f"```json\n{deep}\n```").failure == NOT_JSON
