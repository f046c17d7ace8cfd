"""The kinds of study, each declared once with what it can do: what a participant is given, how an
answer is checked and stored, which reports apply. Code that differs by kind asks a study's
`capabilities` (Study and StudyRules both have them), never compares its kind: a new kind is one
entry here, and only the places that do something new for it change (docs/development.md, "Adding
a kind of study"). evaluation, prolific and modelzoo read the same capabilities: this floor names
them in its own words (word marks, choices), never in a report's."""

from dataclasses import dataclass, fields

from django.db import models


class Kind(models.TextChoices):
    EMPHASIS = "emphasis", "Three-level word emphasis"
    LISTENING_FORM = "form", "Listening form"


@dataclass(frozen=True)
class Capabilities:
    # A participant marks the words of a clip, a level for each (Annotation.levels): the emphasis
    # task page and its gates, and the word-level reports (agreement, label sets, the designer).
    answers_are_word_marks: bool
    # A participant answers a form item's question (Annotation.response): the listening-form task
    # page, the listening-form and suite reports, system outputs and detectors over form items.
    answers_are_choices: bool
    # Its attention checks are items of the study with a gold answer (ListeningFormItem settings),
    # not AttentionCheck clips set beside the study's clips.
    checks_are_items: bool
    # Adaptive stopping and allocation apply: they settle a clip from its word marks.
    adaptive_designs: bool
    # What staff pages call one of its study items and one answer to it.
    item_noun: str
    answer_noun: str


CAPABILITIES: dict[str, Capabilities] = {
    Kind.EMPHASIS: Capabilities(
        answers_are_word_marks=True,
        answers_are_choices=False,
        checks_are_items=False,
        adaptive_designs=True,
        item_noun="clip",
        answer_noun="annotation",
    ),
    Kind.LISTENING_FORM: Capabilities(
        answers_are_word_marks=False,
        answers_are_choices=True,
        checks_are_items=True,
        adaptive_designs=False,
        item_noun="item",
        answer_noun="answer",
    ),
}

CAPABILITY_NAMES = frozenset(field.name for field in fields(Capabilities) if field.type in (bool, "bool"))


def capabilities_of(kind: str) -> Capabilities:
    return CAPABILITIES[kind]


def kinds_with(capability: str) -> list[str]:
    """The kinds that have `capability` (a yes/no field of Capabilities), for a query:
    `Study.objects.filter(kind__in=kinds_with("answers_are_choices"))`."""
    if capability not in CAPABILITY_NAMES:
        raise ValueError(f"unknown capability {capability!r}; one of {', '.join(sorted(CAPABILITY_NAMES))}")
    return [kind for kind, capabilities in CAPABILITIES.items() if getattr(capabilities, capability)]
