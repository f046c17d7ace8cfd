"""The report page's parameter form: read from the query string, with the study's defaults."""

from urllib.parse import urlencode

from django import forms

from annotation.models import Study
from annotation.selectors.study_data import study_languages, study_thresholds
from annotation.study_kinds import kinds_with
from evaluation.reports.agreement import ReportParameters
from evaluation.services.agreement_reports import default_subsample, report_parameters
from evaluation.stats.annotator_models import DEFAULT_RESAMPLES, MODELS
from evaluation.stats.label_sets import MMEE_AROUSAL, check_arousal_mapping
from evaluation.stats.quality import Thresholds

FIELDS = (
    "language",
    "subsample",
    "seed",
    "resamples",
    "exclude_flagged",
    "min_kappa",
    "min_attention",
    "min_time_ratio",
    "max_marked_share",
)


class ReportForm(forms.Form):
    language = forms.ChoiceField(required=False)
    subsample = forms.IntegerField(
        min_value=0,
        max_value=1000,
        help_text="0 (the default) uses every usable annotation; N takes N per clip, and clips with fewer are "
        "left out (the report says how many).",
    )
    seed = forms.IntegerField(min_value=0, max_value=2**32 - 1)
    resamples = forms.IntegerField(min_value=0, max_value=20_000, help_text="Clip bootstrap resamples; 0 for none.")
    exclude_flagged = forms.BooleanField(required=False, label="Leave out flagged annotators")
    min_kappa = forms.FloatField(required=False, label="Flag kappa below")
    min_attention = forms.FloatField(required=False, min_value=0, max_value=1, label="Flag attention share below")
    min_time_ratio = forms.FloatField(
        required=False,
        min_value=0,
        label="Flag median time per clip below",
        help_text="As a multiple of the clip's duration (1 = less time than playing the clip once).",
    )
    max_marked_share = forms.FloatField(required=False, min_value=0, max_value=1, label="Flag share marked above")

    def __init__(self, data=None, *, study: Study):
        self.study = study
        defaults = ReportParameters(subsample=None, thresholds=study_thresholds(study=study))
        initial = {
            "language": "",
            "subsample": default_subsample(study) or 0,  # 0: every usable annotation
            "seed": defaults.seed,
            "resamples": defaults.resamples,
            "exclude_flagged": False,
            **_threshold_values(defaults.thresholds),
        }
        if data is not None:  # a link may give only some fields: the others keep their defaults
            given = {key: data.get(key) for key in FIELDS if key in data}
            data = {key: "" if value is None else value for key, value in initial.items() if key != "exclude_flagged"}
            data |= given
        super().__init__(data, initial=initial)
        languages = study_languages(study=study)
        self.fields["language"].choices = [("", "all languages")] + [(code, code or "(none)") for code in languages]

    def clean_subsample(self):
        value = self.cleaned_data["subsample"]
        if value == 1:
            raise forms.ValidationError("Agreement needs at least 2 annotations per clip (0 uses all).")
        return value

    def parameters(self) -> ReportParameters:
        """The parameters of a valid bound form, or the study's defaults for an unbound one."""
        values = self.cleaned_data if self.is_bound else self.initial
        thresholds = study_thresholds(study=self.study)
        return report_parameters(
            study=self.study,
            language=values["language"] or None,
            subsample=values["subsample"] or None,
            seed=values["seed"],
            resamples=values["resamples"],
            exclude_flagged=values["exclude_flagged"],
            thresholds=Thresholds(
                min_kappa=values["min_kappa"],
                min_attention=values["min_attention"],
                min_time_ratio=values["min_time_ratio"],
                max_marked_share=values["max_marked_share"],
                min_others=thresholds.min_others,
                min_words=thresholds.min_words,
            ),
        )


def parameters_query(parameters: ReportParameters) -> str:
    """The query string that gives these parameters back through ReportForm."""
    values = {
        "language": parameters.language or "",
        "subsample": parameters.subsample or 0,
        "seed": parameters.seed,
        "resamples": parameters.resamples,
        **{key: "" if value is None else value for key, value in _threshold_values(parameters.thresholds).items()},
    }
    if parameters.exclude_flagged:
        values["exclude_flagged"] = "on"
    return urlencode({key: values[key] for key in FIELDS if key in values})


def _threshold_values(thresholds: Thresholds) -> dict:
    return {
        "min_kappa": thresholds.min_kappa,
        "min_attention": thresholds.min_attention,
        "min_time_ratio": thresholds.min_time_ratio,
        "max_marked_share": thresholds.max_marked_share,
    }


def _emotion_list(text: str) -> list[str]:
    return [name.strip() for name in text.replace("\n", ",").split(",") if name.strip()]


class LabelSetCreateForm(forms.Form):
    """The admin's "Add label set" page; empty numbers take the first study's defaults."""

    name = forms.CharField(max_length=200, help_text="An existing name makes its next version.")
    studies = forms.ModelMultipleChoiceField(
        queryset=Study.objects.filter(kind__in=kinds_with("answers_are_word_marks")).order_by("name"),
        help_text="One or more emphasis studies (MMEE pools one study per variety).",
    )
    subsample = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=1000,
        help_text="Annotations per clip, as the agreement report (empty or 0, the default: every usable "
        "annotation; N: N a clip, clips with fewer left out and listed).",
    )
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**32 - 1, help_text="The subsample's seed.")
    split_seed = forms.IntegerField(initial=0, min_value=0, max_value=2**32 - 1)
    train = forms.FloatField(initial=0.8, min_value=0, max_value=1, label="Train share")
    validation = forms.FloatField(initial=0.1, min_value=0, max_value=1, label="Validation share")
    test = forms.FloatField(initial=0.1, min_value=0, max_value=1, label="Test share")
    split_by_speaker = forms.BooleanField(required=False, label="Keep each speaker in one split")
    exclude_flagged = forms.BooleanField(required=False, label="Leave out flagged annotators")
    exclude_failed_checks = forms.BooleanField(required=False, label="Leave out annotators who failed a check")
    resamples = forms.IntegerField(initial=1000, min_value=0, max_value=20_000, help_text="For the agreement summary.")
    arousal_high = forms.CharField(
        required=False,
        label="High-arousal emotions",
        initial=", ".join(MMEE_AROUSAL["high"]),
        widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
        help_text="Separated by commas or new lines; MMEE's lists by default. Common forms of an emotion listed "
        "count as it (angry as anger, sad as sadness). An emotion in neither list gets no arousal: the built "
        "set lists every such emotion.",
    )
    arousal_low = forms.CharField(
        required=False,
        label="Low-arousal emotions",
        initial=", ".join(MMEE_AROUSAL["low"]),
        widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
    )

    annotator_model = forms.ChoiceField(
        required=False,
        choices=[("", "None (majority labels only)"), *((model, model) for model in MODELS)],
        help_text="Also give each word the model's posterior and each annotator's reliability with its standard "
        "error (dawid-skene: the binary marks; ordinal: the three levels). The majority's labels stay the set's "
        "labels: the set shows how the model's labels fare against them on each study's own annotations "
        "(agreement with a held-out listener) and recommends them only where they do better.",
    )
    model_resamples = forms.IntegerField(
        required=False,
        initial=DEFAULT_RESAMPLES,
        min_value=0,
        max_value=1000,
        help_text="Bootstrap resamples for the SE.",
    )

    def clean(self):
        data = super().clean()
        shares = [data.get(name) for name in ("train", "validation", "test")]
        if None not in shares and abs(sum(shares) - 1) > 1e-9:
            raise forms.ValidationError("The train, validation and test shares must add up to 1.")
        return data

    def parameter_overrides(self) -> dict:
        data = self.cleaned_data
        overrides = {
            name: data[name]
            for name in (
                "seed",
                "split_seed",
                "split_by_speaker",
                "exclude_flagged",
                "exclude_failed_checks",
                "resamples",
            )
        }
        overrides["proportions"] = (data["train"], data["validation"], data["test"])
        if "arousal_high" in self.data or "arousal_low" in self.data:  # else MMEE's (a form posted by a script)
            lists = {"high": _emotion_list(data["arousal_high"]), "low": _emotion_list(data["arousal_low"])}
            overrides["arousal"] = check_arousal_mapping(lists)  # ValueError: the page shows it
        if data["subsample"] is not None:
            overrides["subsample"] = data["subsample"] or None
        if data.get("annotator_model"):
            overrides["annotator_model"] = data["annotator_model"]
            overrides["model_resamples"] = (
                DEFAULT_RESAMPLES if data["model_resamples"] is None else data["model_resamples"]
            )
        return overrides
