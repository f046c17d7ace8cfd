"""Submitted answers as a reader takes them in: the words with their emphasis
levels, or a listening-form answer in the item's words rather than its JSON.

No database access: callers pass the clip's words and the form item they
already loaded, so that a page of answers costs no query per row.
"""

import json

from annotation.models import ListeningFormItem

LEVEL_MARKS = {1: "¹", 2: "²"}


def marked_words(words: list[str], levels: list[int]) -> str:
    """'the cat² sat¹ on the mat': each word with its level as a superscript (none for 0).

    When the words and levels do not line up (a transcript edited after the
    answer), the levels alone are shown, as pairing them would mislabel words.
    """
    if len(words) != len(levels):
        return compact_levels(levels)
    return " ".join(word + LEVEL_MARKS.get(level, "") for word, level in zip(words, levels))


def compact_levels(levels: list[int]) -> str:
    return " ".join(str(level) for level in levels)


def form_answer(form_item: ListeningFormItem, *, response: dict, levels: list[int], words: list[str]) -> str:
    """The answer to one form item, prefixed with the item's id (a clip may carry several questions)."""
    try:
        answer = _ANSWER_TEXT[form_item.item_type](form_item, response, levels, words)
    except (KeyError, IndexError, TypeError, ValueError):
        # An answer stored before the item's options changed: show it as stored.
        answer = json.dumps(response, ensure_ascii=False, sort_keys=True)
    return f"{form_item.external_id}: {answer}"


def _single_choice(item: ListeningFormItem, response: dict, levels, words) -> str:
    return f"“{item.options[response['choice']]}”"


def _pairwise(item: ListeningFormItem, response: dict, levels, words) -> str:
    return {"a": "prefers A", "b": "prefers B", "none": "no preference"}[response["prefer"]]


def _rating(item: ListeningFormItem, response: dict, levels, words) -> str:
    value = response["value"]
    if not item.options:
        return f"{value:g} / 100"
    values = item.settings.get("values") or list(range(1, len(item.options) + 1))
    return f"{value:g} – {item.options[values.index(value)]}"


def _stance(item: ListeningFormItem, response: dict, levels, words) -> str:
    pole = {"P": item.settings["positive"], "N": item.settings["negative"]}[response["pole"]]
    return f"{pole} (sure: {round(response['confidence'] * 100)} %)"


def _stressed_words(item: ListeningFormItem, response: dict, levels: list[int], words: list[str]) -> str:
    return marked_words(words, levels)


_ANSWER_TEXT = {
    ListeningFormItem.Type.SINGLE_CHOICE: _single_choice,
    ListeningFormItem.Type.PAIRWISE: _pairwise,
    ListeningFormItem.Type.RATING: _rating,
    ListeningFormItem.Type.STANCE: _stance,
    ListeningFormItem.Type.STRESSED_WORDS: _stressed_words,
}
