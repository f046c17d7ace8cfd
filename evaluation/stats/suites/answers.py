"""Reading a system's raw answers. Pure Python: no Django.

Systems answer in their own words: an option index, a letter label, the text of an option, a list
of words, a JSON object in a Markdown fence. Parsing is part of the score, so an answer that cannot
be read is never dropped: each parser returns either what the answer names or a failure, a short
fixed phrase (the same phrase for the same kind of failure, so that failures can be counted by
reason).

- parse_choice (StressTest SSR): the option an answer names, tried in this order: text equal to one
  option; an index (int or digit string, 0-based like the options); a letter label ("A", "b", "(a)",
  "Option B"; A is the first option); text containing exactly one option's text.
- parse_stressed (StressTest SSD): the stressed words an answer names, as sorted word indices.
- parse_stance (StanceBench): the pole ("P"/"N") and confidence of a judge's JSON answer.

Text is compared casefolded, with runs of whitespace as one space and trailing punctuation ignored.
"""

import contextlib
import json
import math
import re
from typing import NamedTuple

# Choice failures
NOT_A_STRING_OR_NUMBER = "not a string or number"
INDEX_OUT_OF_RANGE = "index out of range"
NAMES_NO_OPTION = "names no option"
NAMES_SEVERAL_OPTIONS = "names several options"
# Stressed-word failures
NO_ANSWER = "no answer"
NOT_WORDS = "not a list of word indices or words"
WORD_INDEX_OUT_OF_RANGE = "word index out of range"
NAMES_NO_WORD = "names no word of the sentence"
# Stance failures (StanceBench's structural failures)
NOT_JSON = "not valid JSON"
NOT_AN_OBJECT = "not a JSON object"
NO_CHOICE = "no choice (choice, answer or pole)"
CHOICE_NOT_A_POLE = "choice is not P or N"
NO_CONFIDENCE = "no confidence (confidence or conf)"
CONFIDENCE_NOT_A_NUMBER = "confidence is not a number"
CONFIDENCE_OUT_OF_RANGE = "confidence out of range [0, 1]"

POLES = ("P", "N")
_TRAILING_PUNCTUATION = ".,;:!?"
_LETTER_LABEL = re.compile(r"(?:option\s+|answer\s*:?\s*)?\(?([a-z])\)?[.:]?")
_DIGITS = re.compile(r"\d+")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL | re.IGNORECASE)
_WORD_EDGES = "\"'“”‘’«»()[]{}.,;:!?-–—"


class ParsedChoice(NamedTuple):
    option: int | None  # the chosen option's index ("index" would hide tuple.index)
    failure: str | None


class ParsedStressed(NamedTuple):
    indices: tuple[int, ...] | None  # sorted, each word once; () is "no word stressed", a valid answer
    failure: str | None


class ParsedStance(NamedTuple):
    pole: str | None  # "P" or "N"
    confidence: float | None  # in [0, 1]
    failure: str | None

    @property
    def signed(self) -> float | None:
        """StanceBench's signed probability: +confidence for P, -confidence for N."""
        if self.failure is not None or self.confidence is None:
            return None
        return self.confidence if self.pole == "P" else -self.confidence


def normalized(text: str) -> str:
    """Casefolded, whitespace collapsed, trailing punctuation and surrounding quotes dropped."""
    text = " ".join(text.casefold().split())
    return text.rstrip(_TRAILING_PUNCTUATION).strip().strip("\"'“”‘’").rstrip(_TRAILING_PUNCTUATION).strip()


def _is_number(raw) -> bool:
    # bool is an int in Python, but true/false names no option
    return isinstance(raw, (int, float)) and not isinstance(raw, bool)


def _index(value: int, options) -> ParsedChoice:
    if 0 <= value < len(options):
        return ParsedChoice(value, None)
    return ParsedChoice(None, INDEX_OUT_OF_RANGE)


def parse_choice(raw, options) -> ParsedChoice:
    """The option index an answer names, or why it names none (see the module docstring)."""
    if raw is None:
        return ParsedChoice(None, NO_ANSWER)
    if _is_number(raw):
        if isinstance(raw, float) and not raw.is_integer():
            return ParsedChoice(None, INDEX_OUT_OF_RANGE)
        return _index(int(raw), options)
    if not isinstance(raw, str):
        return ParsedChoice(None, NOT_A_STRING_OR_NUMBER)
    text = normalized(raw)
    texts = [normalized(str(option)) for option in options]
    if text and text in texts:  # an option that reads "A" or "1" is meant as itself, not as a label
        return ParsedChoice(texts.index(text), None)
    if _DIGITS.fullmatch(text):
        return _index(int(text), options)
    label = _LETTER_LABEL.fullmatch(text)
    if label:
        return _index(ord(label.group(1)) - ord("a"), options)
    return _contained_option(text, texts)


def _contained_option(text: str, texts: list[str]) -> ParsedChoice:
    named = [k for k, option in enumerate(texts) if option and _contains_phrase(text, option)]
    # "Ann went home" also contains the shorter option "Ann went": the longer one is what it names
    named = [k for k in named if not any(k != j and texts[k] in texts[j] for j in named)]
    if not named:
        return ParsedChoice(None, NAMES_NO_OPTION)
    if len({texts[k] for k in named}) > 1:
        return ParsedChoice(None, NAMES_SEVERAL_OPTIONS)
    return ParsedChoice(named[0], None)


def _contains_phrase(text: str, phrase: str) -> bool:
    """phrase occurs in text as whole words ("no" is not found in "not")."""
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


def _word_key(word: str) -> str:
    return word.casefold().strip(_WORD_EDGES)


def parse_stressed(raw, words) -> ParsedStressed:
    """The stressed words an answer names: a list of word indices (0-based); or words, as a list or
    a text, each naming every occurrence of that word in the sentence. A text holding a JSON list
    ("[2, 4]") is that list; a dict is read at its "stressed" key."""
    if isinstance(raw, dict) and "stressed" in raw:
        raw = raw["stressed"]
    if isinstance(raw, str) and raw.strip().startswith("["):
        # else a text that starts with a bracket (RecursionError: nested too deep to be a list)
        with contextlib.suppress(ValueError, RecursionError):
            raw = json.loads(raw)
    if raw is None:
        return ParsedStressed(None, NO_ANSWER)
    if isinstance(raw, (list, tuple)):
        return _stressed_from_list(list(raw), words)
    if isinstance(raw, str):
        return _stressed_from_words(raw.split(), words)
    return ParsedStressed(None, NOT_WORDS)


def _stressed_from_list(values: list, words) -> ParsedStressed:
    if all(_is_number(value) and float(value).is_integer() for value in values):
        indices = sorted({int(value) for value in values})
        if any(index < 0 or index >= len(words) for index in indices):
            return ParsedStressed(None, WORD_INDEX_OUT_OF_RANGE)
        return ParsedStressed(tuple(indices), None)
    if all(isinstance(value, str) for value in values):
        return _stressed_from_words([part for value in values for part in value.split()], words)
    return ParsedStressed(None, NOT_WORDS)


def _stressed_from_words(named, words) -> ParsedStressed:
    keys = {_word_key(word) for word in named} - {""}
    indices = tuple(k for k, word in enumerate(words) if _word_key(word) in keys)
    if not indices:
        return ParsedStressed(None, NAMES_NO_WORD)
    return ParsedStressed(indices, None)


def parse_stance(raw) -> ParsedStance:
    """A judge's pole and confidence from a JSON object (a dict, a JSON string, or a JSON string in a
    Markdown ```json fence). Anything else is a structural failure, named."""
    if raw is None:
        return ParsedStance(None, None, NO_ANSWER)
    if isinstance(raw, str):
        fenced = _FENCE.search(raw)
        try:
            raw = json.loads(fenced.group(1) if fenced else raw)
        except (ValueError, RecursionError):  # RecursionError: nested too deep to be an answer
            return ParsedStance(None, None, NOT_JSON)
    if not isinstance(raw, dict):
        return ParsedStance(None, None, NOT_AN_OBJECT)
    choice = _first_present(raw, ("choice", "answer", "pole"))
    confidence = _first_present(raw, ("confidence", "conf"))
    failure = _pole_failure(choice) or _confidence_failure(confidence)
    if failure:
        return ParsedStance(None, None, failure)
    return ParsedStance(choice.strip().upper(), float(confidence), None)


def _first_present(answer: dict, keys):
    for key in keys:
        if key in answer:
            return answer[key]
    return None


def _pole_failure(choice) -> str | None:
    if choice is None:
        return NO_CHOICE
    if not isinstance(choice, str) or choice.strip().upper() not in POLES:
        return CHOICE_NOT_A_POLE
    return None


def _confidence_failure(confidence) -> str | None:
    if confidence is None:
        return NO_CONFIDENCE
    if not _is_number(confidence) or math.isnan(confidence):
        return CONFIDENCE_NOT_A_NUMBER
    if not 0 <= confidence <= 1:
        return CONFIDENCE_OUT_OF_RANGE
    return None
