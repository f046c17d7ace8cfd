"""Server-rendered answer forms for listening-form items, one per item type.

Each form is built for one participant's presentation of an item (the order
in which options, clips and poles were shown) and turns the answer back into
the item's own terms, so that answers from different orders can be compared.
"""

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import ListeningFormItem

SLIDER_MAX = 100


class AnswerForm(forms.Form):
    """Each item type's form defines build() (its fields) and response() (the
    answer in the item's own terms); word-marking forms also define levels()."""

    def __init__(self, item: ListeningFormItem, presentation: dict, words: list[str], *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.item, self.presentation, self.words = item, presentation, words
        self.build()

    def levels(self) -> list[int]:
        return []


class SingleChoiceForm(AnswerForm):
    def build(self):
        order = self.presentation["option_order"]
        self.fields["choice"] = forms.TypedChoiceField(
            label=self.item.prompt or _("Which meaning did the speaker intend?"),
            choices=[(str(index), self.item.options[index]) for index in order],
            coerce=int,
            widget=forms.RadioSelect,
        )

    def response(self):
        return {"choice": self.cleaned_data["choice"]}


class PairwiseForm(AnswerForm):
    def build(self):
        first, second = self.presentation["clip_order"]
        choices = [(first, _("The first clip")), (second, _("The second clip"))]
        if self.item.settings.get("allow_tie"):
            choices.append(("none", _("No preference")))
        self.fields["prefer"] = forms.ChoiceField(
            label=self.item.prompt or _("Which version is better?"), choices=choices, widget=forms.RadioSelect
        )

    def response(self):
        return {"prefer": self.cleaned_data["prefer"]}


class RatingForm(AnswerForm):
    def build(self):
        label = self.item.prompt or _("How would you rate it?")
        if self.item.options:
            values = self.item.settings.get("values") or list(range(1, len(self.item.options) + 1))
            self.fields["value"] = forms.TypedChoiceField(
                label=label,
                choices=[(str(v), f"{v} – {text}") for v, text in zip(values, self.item.options)],
                coerce=float,
                widget=forms.RadioSelect,
            )
        else:
            self.fields["value"] = forms.IntegerField(
                label=label,
                min_value=0,
                max_value=SLIDER_MAX,
                widget=forms.NumberInput(attrs={"type": "range", "min": 0, "max": SLIDER_MAX, "step": 1}),
            )

    def response(self):
        return {"value": float(self.cleaned_data["value"])}


class StanceForm(AnswerForm):
    def build(self):
        settings = self.item.settings
        poles = {
            "P": f"{settings['positive']}: {settings.get('positive_definition', '')}".rstrip(": "),
            "N": f"{settings['negative']}: {settings.get('negative_definition', '')}".rstrip(": "),
        }
        self.fields["pole"] = forms.ChoiceField(
            label=self.item.prompt or _("Which better describes how the speaker sounds?"),
            choices=[(pole, poles[pole]) for pole in self.presentation["pole_order"]],
            widget=forms.RadioSelect,
        )
        self.fields["confidence"] = forms.IntegerField(
            label=_("How sure are you? (0 = not at all, 100 = completely)"),
            min_value=0,
            max_value=100,
            widget=forms.NumberInput(attrs={"type": "range", "min": 0, "max": 100, "step": 5}),
        )

    def response(self):
        return {
            "pole": self.cleaned_data["pole"],
            "confidence": self.cleaned_data["confidence"] / 100,
            "pole_order": self.presentation["pole_order"],
        }


class StressedWordsForm(AnswerForm):
    def build(self):
        self.fields["stressed"] = forms.TypedMultipleChoiceField(
            label=self.item.prompt or _("Which words did the speaker stress?"),
            choices=[(str(index), word) for index, word in enumerate(self.words)],
            coerce=int,
            widget=forms.CheckboxSelectMultiple,
            required=False,
        )

    def response(self):
        return {}

    def levels(self):
        marked = set(self.cleaned_data["stressed"])
        return [1 if index in marked else 0 for index in range(len(self.words))]


FORMS = {
    ListeningFormItem.Type.SINGLE_CHOICE: SingleChoiceForm,
    ListeningFormItem.Type.PAIRWISE: PairwiseForm,
    ListeningFormItem.Type.RATING: RatingForm,
    ListeningFormItem.Type.STANCE: StanceForm,
    ListeningFormItem.Type.STRESSED_WORDS: StressedWordsForm,
}


def answer_form(item: ListeningFormItem, presentation: dict, words: list[str], data=None) -> AnswerForm:
    return FORMS[item.item_type](item, presentation, words, data=data)


def presentation_for(item: ListeningFormItem, rng, *, pole_order: str | None) -> dict:
    """How one participant sees the item. A stance item's `pole_order` ("PN" or "NP")
    is chosen by annotation.services.pole_orders, balanced over the item's listeners."""
    if item.item_type == ListeningFormItem.Type.SINGLE_CHOICE:
        order = list(range(len(item.options)))
        rng.shuffle(order)
        return {"option_order": order}
    if item.item_type == ListeningFormItem.Type.PAIRWISE:
        return {"clip_order": rng.choice([["a", "b"], ["b", "a"]])}
    if item.item_type == ListeningFormItem.Type.STANCE:
        if pole_order not in ("PN", "NP"):
            raise ValueError(f"stance item {item.pk}: pole order must be PN or NP, not {pole_order!r}")
        return {"pole_order": pole_order}
    return {}
