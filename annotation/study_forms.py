"""Forms of a study: creating one from a corpus selection, and the checks on settings that name
word indices and levels. The study admin shows them and the API (annotation/api/study_writes.py)
runs the same checks, so they sit below both, not in the admin."""

import re

from django import forms

from annotation.answer_fields import AnswerLinesField, words_named
from annotation.form_fields import JSONFormField
from annotation.models import AttentionCheck, Clip, PrerequisiteQuestion, Speaker, Study
from annotation.services.studies import ClipSelection, clips_selected

LEVELS = (0, 1, 2)

# The settings offered when creating a study; the rest are on the change page.
CREATE_SETTINGS = [
    "language",
    "clips_per_task",
    "target_annotations",
    "min_marked_words",
    "max_marked_fraction",
    "time_limit_minutes",
    "places",
    "reward",
    "reward_currency",
    "estimated_minutes",
    "attention_checks_per_task",
    "mismatch_threshold",
    "instructions",
    "consent_text",
]


_ANY = "Ctrl- or Cmd-click to choose several; none chosen means any."


def _distinct(field: str) -> list[tuple[str, str]]:
    values = Clip.objects.exclude(**{field: ""}).order_by(field).values_list(field, flat=True).distinct()
    return [(value, value) for value in values]


def _lines(text: str, *, commas: bool) -> list[str]:
    # Kept in the order given, each once: the selection is stored as typed.
    parts = re.split(r"[\n,]" if commas else r"\n", text or "")
    return list(dict.fromkeys(part.strip() for part in parts if part.strip()))


class StudyCreateForm(forms.ModelForm):
    languages = forms.MultipleChoiceField(
        required=False, widget=forms.SelectMultiple(attrs={"size": 6}), help_text=_ANY
    )
    varieties = forms.MultipleChoiceField(
        required=False, widget=forms.SelectMultiple(attrs={"size": 6}), help_text=_ANY
    )
    emotions = forms.MultipleChoiceField(required=False, widget=forms.SelectMultiple(attrs={"size": 6}), help_text=_ANY)
    speakers = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Speaker ids, one per line or comma-separated.",
    )
    tags = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Clips carrying any of these tags; one per line or comma-separated.",
    )
    clip_ids = forms.CharField(
        label="Clip ids",
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="An explicit list of clip ids, one per line; combined with the criteria above.",
    )

    class Meta:
        model = Study
        fields = ["name", "slug", "corpus", *CREATE_SETTINGS]
        help_texts = {
            "language": "Leave empty to take the language of the selected clips, when they share one.",
            "slug": "Leave empty to derive it from the name.",
        }

    sections = [
        ("Study", ["name", "slug", "corpus"]),
        ("Clips", ["languages", "varieties", "emotions", "speakers", "tags", "clip_ids"]),
        ("Settings", CREATE_SETTINGS),
    ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["slug"].required = False
        for name, column in (("languages", "language"), ("varieties", "variety"), ("emotions", "emotion")):
            self.fields[name].choices = _distinct(column)

    def clean(self):
        data = super().clean()
        corpus = data.get("corpus")
        if corpus is None:
            return data
        selection = self.selection()
        self._check_known("clip_ids", selection.clip_ids, Clip.objects.filter(corpus=corpus), "external_id", "clip")
        self._check_known("speakers", selection.speakers, Speaker.objects.filter(corpus=corpus), "name", "speaker")
        if not self.errors and not clips_selected(corpus=corpus, selection=selection).exists():
            raise forms.ValidationError(f"No clip of corpus {corpus.name!r} matches this selection.")
        return data

    def fieldsets(self) -> list[tuple[str, list]]:
        return [(title, [self[name] for name in names]) for title, names in self.sections]

    def selection(self) -> ClipSelection:
        data = self.cleaned_data
        return ClipSelection(
            languages=list(data.get("languages") or []),
            varieties=list(data.get("varieties") or []),
            emotions=list(data.get("emotions") or []),
            speakers=_lines(data.get("speakers"), commas=True),
            tags=_lines(data.get("tags"), commas=True),
            clip_ids=_lines(data.get("clip_ids"), commas=False),
        )

    def settings(self) -> dict:
        # An empty slug lets study_create derive a free one from the name.
        return {name: self.cleaned_data[name] for name in ["slug", *CREATE_SETTINGS] if self.cleaned_data[name] != ""}

    def _check_known(self, field: str, wanted: list[str], rows, column: str, noun: str) -> None:
        # A typo must not silently leave a clip out of the study.
        known = set(rows.filter(**{f"{column}__in": wanted}).values_list(column, flat=True))
        unknown = [value for value in wanted if value not in known]
        if unknown:
            shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
            self.add_error(field, f"No {noun} of corpus {self.cleaned_data['corpus'].name!r} is called: {shown}")


def word_levels_errors(levels_by_index: dict, word_count: int, clip) -> list[str]:
    """What is wrong with {word index: level} for a clip of `word_count` words."""
    errors = []
    for index, level in levels_by_index.items():
        try:
            position = int(index)
        except (TypeError, ValueError):
            errors.append(f"{index!r} is not a word index (0, 1, 2, ...).")
            continue
        if not 0 <= position < word_count:
            errors.append(
                f"Word index {position} is outside clip {clip}, which has {word_count} word(s) "
                f"(indices 0 to {word_count - 1})."
                if word_count
                else f"Clip {clip} has no words."
            )
        if isinstance(level, bool) or level not in LEVELS:
            errors.append(f"Level {level!r} for word {index} must be 0, 1 or 2.")
    return errors


# The attention check's levels, one field a level: the words that must take it.
LEVEL_FIELDS = {"heavily_emphasized": 2, "emphasized": 1, "unmarked": 0}
_WORDS_HELP = "Words of the clip, or their positions counted from 1, separated by commas."


class AttentionCheckForm(forms.ModelForm):
    """An attention check's expected answer as the words that must take each level; words not
    named may take any level. `expected` (JSON, word index from 0 to level, as the API takes it)
    stays as an alternative."""

    heavily_emphasized = forms.CharField(label="Must be heavily emphasized (2)", required=False, help_text=_WORDS_HELP)
    emphasized = forms.CharField(label="Must be emphasized (1)", required=False, help_text=_WORDS_HELP)
    unmarked = forms.CharField(label="Must stay unmarked (0)", required=False, help_text=_WORDS_HELP)
    expected = JSONFormField(
        label="Or as JSON",
        required=False,
        widget=forms.Textarea(attrs={"rows": 1, "cols": 16}),
        help_text='Word index (from 0) to level, e.g. {"3": 2}; used only when the fields before are empty.',
    )

    class Meta:
        model = AttentionCheck
        fields = ["clip", "kind", "rule", *LEVEL_FIELDS, "expected"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Left out (an older script's POST): the model's default, at least the level named.
        self.fields["rule"].required = False
        if self.instance.pk and self.instance.expected:
            for name, level in LEVEL_FIELDS.items():
                positions = [int(index) + 1 for index, value in self.instance.expected.items() if value == level]
                self.initial[name] = ", ".join(str(position) for position in sorted(positions))
            self.initial["expected"] = None

    def clean(self):
        data = super().clean()
        clip = data.get("clip")
        if clip is None or "expected" in self.errors:
            return data
        words = list(clip.words.order_by("index").values_list("text", flat=True))
        if any(data.get(name) for name in LEVEL_FIELDS):
            expected = self._from_words(data, words, clip)
            if expected is None:
                return data  # the fields' errors say why
        else:
            expected = data.get("expected")
        if not isinstance(expected, dict) or not expected:
            field = "heavily_emphasized" if expected is None else "expected"
            why = 'Name at least one word and the level it must take (or give them as a JSON object, e.g. {"3": 2}).'
            self.add_error(field, why)
            return data
        errors = word_levels_errors(expected, len(words), clip)
        if errors:
            self.add_error("expected", errors)
            return data
        # Keys as strings of plain integers ("03" -> "3"), as passed_by reads them.
        data["expected"] = self.instance.expected = {str(int(index)): level for index, level in expected.items()}
        return data

    def _from_words(self, data, words, clip) -> dict | None:
        expected, errors = {}, False
        for name, level in LEVEL_FIELDS.items():
            indices, problems = words_named(data.get(name), words, clip)
            for index in indices:
                if expected.get(index, level) != level:
                    problems.append(f"Word {index + 1} ({words[index]}) is named for two levels.")
                expected[index] = level
            if problems:
                self.add_error(name, problems)
                errors = True
        return None if errors else expected


class PrerequisiteQuestionForm(forms.ModelForm):
    choices = AnswerLinesField(label="Answers offered", help_text="One answer per line, in the order shown.")
    accepted = AnswerLinesField(
        label="Answers that qualify", help_text="One per line, each as written in the answers offered."
    )

    class Meta:
        model = PrerequisiteQuestion
        fields = ["position", "text", "choices", "accepted"]
        labels = {"text": "Question"}

    def clean(self):
        data = super().clean()
        choices, accepted = data.get("choices"), data.get("accepted")
        if "choices" in self.errors or "accepted" in self.errors:
            return data
        if not isinstance(choices, list) or len(choices) < 2 or not all(isinstance(c, str) for c in choices):
            self.add_error("choices", "Give at least two answers, one per line.")
        elif not isinstance(accepted, list) or not accepted or not set(accepted) <= set(choices):
            unknown = [answer for answer in accepted or [] if answer not in choices]
            self.add_error(
                "accepted",
                "List the qualifying answers; each must be one of the choices"
                + (f" (not: {', '.join(map(str, unknown))})." if unknown else "."),
            )
        return data


class StudySettingsForm(forms.ModelForm):
    """The change page: the worked example's levels must fit its clip."""

    class Meta:
        model = Study
        fields = "__all__"

    def clean(self):
        data = super().clean()
        clip, levels = data.get("example_clip"), data.get("example_levels")
        if "example_levels" in self.errors or not levels:
            return data
        if not isinstance(levels, list):
            self.add_error("example_levels", "Give the example's levels as a JSON list, e.g. [0, 2, 0, 1].")
        elif clip is None:
            self.add_error("example_clip", "Choose the clip the example levels belong to.")
        else:
            word_count = clip.words.count()
            errors = word_levels_errors(dict(enumerate(levels)), word_count, clip)
            if errors:
                self.add_error("example_levels", errors)
        return data
