"""Words of a transcript: split it, or check a given word list against it.

Punctuation stays attached to the word it follows or precedes ("fox."), and
a token made only of punctuation is never a word to mark.
"""

import itertools
import math
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class WordSpec:
    text: str
    start: float | None = None
    end: float | None = None


# Languages whose writing puts no spaces between words (BCP 47 primary subtags):
# Chinese (and its varieties), Japanese, Thai, Lao, Khmer, Burmese, Tibetan.
NO_SPACE_LANGUAGES = {"zh", "cmn", "yue", "wuu", "ja", "th", "lo", "km", "my", "bo"}


def written_without_spaces(language: str) -> bool:
    return language.replace("_", "-").split("-")[0].lower() in NO_SPACE_LANGUAGES


def is_wordlike(token: str) -> bool:
    return any(unicodedata.category(char)[0] in "LNM" for char in token)


def split_transcript(transcript: str) -> list[WordSpec]:
    return [WordSpec(token) for token in transcript.split() if is_wordlike(token)]


def parse_word_list(value: object, transcript: str) -> list[WordSpec]:
    """Validate a manifest word list; raises ValueError with the reason."""
    if not isinstance(value, list) or not value:
        raise ValueError("must be a non-empty list of words")
    words = [_parse_word(position, item) for position, item in enumerate(value)]
    _check_order(words)
    _check_matches_transcript(words, transcript)
    return words


def _parse_word(position: int, item: object) -> WordSpec:
    if isinstance(item, str):
        item = {"text": item}
    if not isinstance(item, dict):
        raise ValueError(f"word {position} must be a string or an object with 'text'")
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"word {position} has no text")
    if not is_wordlike(text):
        raise ValueError(f"word {position} ({text!r}) is punctuation only")
    start, end = item.get("start"), item.get("end")
    if (start is None) != (end is None):
        raise ValueError(f"word {position} ({text!r}) has a start without an end or an end without a start")
    if start is not None:
        start, end = _seconds(position, text, "start", start), _seconds(position, text, "end", end)
        if end <= start:
            raise ValueError(f"word {position} ({text!r}) ends at {end} s, not after its start at {start} s")
    return WordSpec(text.strip(), start, end)


def _seconds(position: int, text: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"word {position} ({text!r}) {name} must be a number of seconds")
    if value < 0:
        raise ValueError(f"word {position} ({text!r}) {name} is negative")
    return float(value)


def _check_order(words: list[WordSpec]) -> None:
    timed = [(position, word) for position, word in enumerate(words) if word.start is not None]
    if timed and len(timed) != len(words):
        raise ValueError("give start and end times for every word or for none")
    for (_, before), (position, word) in itertools.pairwise(timed):
        if word.start < before.start:
            raise ValueError(
                f"word times out of order: word {position} ({word.text!r}) starts at {word.start} s, "
                f"before word {position - 1} ({before.text!r}) at {before.start} s"
            )


def _comparable(text: str) -> str:
    normalized = unicodedata.normalize("NFC", text).casefold()
    return "".join(char for char in normalized if not char.isspace() and unicodedata.category(char)[0] != "P")


def _check_matches_transcript(words: list[WordSpec], transcript: str) -> None:
    target = _comparable(transcript)
    position = 0
    for index, word in enumerate(words):
        piece = _comparable(word.text)
        if target[position : position + len(piece)] != piece:
            found = target[position : position + len(piece)] or "the end of the transcript"
            raise ValueError(
                f"word list does not match the transcript: word {index} is {word.text!r}, "
                f"the transcript has {found!r} there"
            )
        position += len(piece)
    if position < len(target):
        raise ValueError(
            f"word list does not match the transcript: it ends before {target[position : position + 20]!r}"
        )


def check_times_within(words: list[WordSpec], duration: float, tolerance: float = 0.02) -> str | None:
    """Reason why the word times do not fit a clip of this duration, or None."""
    for position, word in enumerate(words):
        if word.end is not None and word.end > duration + tolerance:
            return f"word {position} ({word.text!r}) ends at {word.end} s, past the clip's end at {duration:.3f} s"
    return None
