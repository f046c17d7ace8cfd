"""Admin fields that let a researcher type lists and word levels as text, not JSON: answers one per
line, and the words of a clip named by themselves or their position. The models keep JSON, which
the API and the commands still take as it is (a JSON list typed here is read as well)."""

import json
import re

from django import forms
from django.core.exceptions import ValidationError


class AnswerLinesField(forms.CharField):
    """A list of answers, one per line. A JSON list of text, as the API takes it, is read too."""

    def __init__(self, **kwargs):
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 3, "cols": 24}))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, list):
            return "\n".join(str(answer) for answer in value)
        return value

    def to_python(self, value):
        if isinstance(value, list):
            return value
        text = super().to_python(value)
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except RecursionError:
                raise ValidationError("Enter a valid JSON: it is nested too deeply.", code="invalid") from None
            except json.JSONDecodeError:
                parsed = None
            if isinstance(parsed, list):
                return parsed
        return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))

    def validate(self, value):
        super().validate(value or "")

    def has_changed(self, initial, data):
        try:
            return self.to_python(data) != (initial or [])
        except ValidationError:
            return True


def words_named(text: str, words: list[str], clip) -> tuple[list[int], list[str]]:
    """(word indices, errors) for words typed by themselves or by their position counted from 1,
    separated by commas: "stole, 5" in "I did not say she stole it" is [5, 4]."""
    indices, errors = [], []
    folded = [word.casefold() for word in words]
    for entry in (part.strip() for part in re.split(r"[,\n]", text or "")):
        if not entry:
            continue
        if entry.isdigit():
            position = int(entry)
            if 1 <= position <= len(words):
                indices.append(position - 1)
            else:
                span = f"1 to {len(words)}"
                errors.append(f"Position {position} is outside clip {clip}, which has {len(words)} word(s) ({span}).")
            continue
        found = [index for index, word in enumerate(folded) if word == entry.casefold()]
        if len(found) == 1:
            indices.append(found[0])
        elif not found:
            errors.append(f"{entry!r} is not a word of clip {clip} ({' '.join(words) or 'no words'}).")
        else:
            positions = ", ".join(str(index + 1) for index in found)
            errors.append(f"{entry!r} occurs {len(found)} times in clip {clip}: give its position ({positions}).")
    return indices, errors


def numbered_words(words: list[str]) -> str:
    """'1 the · 2 cat · 3 sat': the positions the level fields take."""
    return " · ".join(f"{position} {word}" for position, word in enumerate(words, start=1))
