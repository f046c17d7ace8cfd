"""The admin's "Launch a benchmark" form: a final label set, a detector, a label mode, one MMEE
setting with its parameters, hyperparameter overrides as JSON, and for cross-dataset a second
set. It only reads the request; modelzoo.services.benchmark_runs checks and launches."""

from django import forms

from annotation.form_fields import JSONFormField
from evaluation.models import LabelSet
from modelzoo.models import BenchmarkRun
from modelzoo.plans import Plan

AROUSAL_CHOICES = [
    ("", "both directions (two runs)"),
    ("high>low", "train high, test low"),
    ("low>high", "train low, test high"),
]


def final_label_sets():
    return LabelSet.objects.filter(lifecycle__in=(LabelSet.Lifecycle.FINAL, LabelSet.Lifecycle.ARCHIVED))


class BenchmarkLaunchForm(forms.Form):
    label_set = forms.ModelChoiceField(queryset=final_label_sets(), help_text="Final (or archived) sets only.")
    detector = forms.ChoiceField(choices=BenchmarkRun.Detector.choices)
    backbone = forms.CharField(
        required=False,
        max_length=200,
        help_text="Blank: whisper-small for the token classifier, xls-r-1b for the frame classifier. Or a "
        "folder inside MODELZOO_CHECKPOINT_DIR. The acoustic baseline has none.",
    )
    label_mode = forms.ChoiceField(choices=BenchmarkRun.LabelMode.choices, initial=BenchmarkRun.LabelMode.BINARY)
    setting = forms.ChoiceField(choices=BenchmarkRun.Kind.choices)
    by = forms.ChoiceField(choices=[("language", "language"), ("variety", "regional variety")], initial="language")
    languages = forms.CharField(
        required=False,
        label="Languages (monolingual, cross-lingual)",
        help_text="Comma-separated codes, one model each. Blank: every language with train, validation and test clips.",
    )
    with_diagonal = forms.BooleanField(
        required=False, initial=True, label="Cross-lingual: also a monolingual model per language (the diagonal)"
    )
    arousal = forms.ChoiceField(choices=AROUSAL_CHOICES, required=False, label="Cross-arousal")
    percents = forms.CharField(
        required=False,
        label="Data scale: percentages of the training clips",
        help_text="Comma-separated, one model each. Blank: the set's nested steps.",
    )
    language = forms.CharField(required=False, label="Data scale, cross-dataset: train on this language only")
    test_label_set = forms.ModelChoiceField(
        queryset=final_label_sets(), required=False, label="Cross-dataset: test on this set"
    )
    test_language = forms.CharField(required=False, label="Cross-dataset: test on this language only")
    config = JSONFormField(
        required=False,
        initial=dict,
        label="Hyperparameter overrides (JSON)",
        help_text='E.g. {"epochs": 3, "learning_rate": 5e-5}; see modelzoo/training/config.py.',
    )
    resamples = forms.IntegerField(min_value=0, max_value=20_000, initial=1000, help_text="Clip bootstrap resamples.")
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)
    devices = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=64,
        initial=1,
        label="Devices (GPUs) a run trains on",
        help_text="More than 1: data parallel over that many GPUs of one GPU worker's machine (torchrun). "
        "The batch size is per device.",
    )

    def clean_devices(self):
        return self.cleaned_data["devices"] or 1  # left blank: one device

    def clean_config(self):
        value = self.cleaned_data["config"]
        if value in (None, ""):
            return {}
        if not isinstance(value, dict):
            raise forms.ValidationError("Give the overrides as a JSON object.")
        return value

    def clean(self):
        cleaned = super().clean()
        if "setting" in cleaned:
            try:
                cleaned["plan"] = self._plan(cleaned)
            except ValueError as error:
                self.add_error("setting", str(error))
        return cleaned

    def _plan(self, cleaned: dict) -> Plan:
        kind = cleaned["setting"]
        train_arousal, _, test_arousal = (cleaned.get("arousal") or "").partition(">")
        return Plan(
            kind=kind,
            by=cleaned.get("by") or "language",
            languages=tuple(_items(cleaned.get("languages"))),
            with_diagonal=bool(cleaned.get("with_diagonal")),
            train_arousal=train_arousal,
            test_arousal=test_arousal,
            percents=tuple(_percent(item) for item in _items(cleaned.get("percents"))),
            language=(cleaned.get("language") or "").strip(),
            test_language=(cleaned.get("test_language") or "").strip(),
        )

    def launch_arguments(self) -> dict:
        """The keyword arguments of benchmark_runs_launch, from a valid form."""
        data = self.cleaned_data
        names = (
            "label_set",
            "detector",
            "label_mode",
            "test_label_set",
            "backbone",
            "config",
            "resamples",
            "seed",
            "devices",
        )
        return {"plan": data["plan"], **{name: data[name] for name in names}}


def _items(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def _percent(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole percentage") from None
