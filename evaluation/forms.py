"""The report page's parameter form: read from the query string, with the study's defaults."""

from urllib.parse import urlencode

from django import forms

from annotation.models import Study
from evaluation.reports.agreement import ReportParameters
from evaluation.selectors.agreement_reports import study_languages
from evaluation.services.agreement_reports import report_parameters
from evaluation.stats.quality import Thresholds

FIELDS = (
    "language", "subsample", "seed", "resamples", "exclude_flagged",
    "min_kappa", "min_attention", "min_median_seconds", "max_marked_share",
)  # fmt: skip


class ReportForm(forms.Form):
    language = forms.ChoiceField(required=False)
    subsample = forms.IntegerField(
        min_value=0, max_value=1000, help_text="Annotations per clip (clips with fewer are left out); 0 uses all."
    )
    seed = forms.IntegerField(min_value=0, max_value=2**32 - 1)
    resamples = forms.IntegerField(min_value=0, max_value=20_000, help_text="Clip bootstrap resamples; 0 for none.")
    exclude_flagged = forms.BooleanField(required=False, label="Leave out flagged annotators")
    min_kappa = forms.FloatField(required=False, label="Flag kappa below")
    min_attention = forms.FloatField(required=False, min_value=0, max_value=1, label="Flag attention share below")
    min_median_seconds = forms.FloatField(required=False, min_value=0, label="Flag median seconds per clip below")
    max_marked_share = forms.FloatField(required=False, min_value=0, max_value=1, label="Flag share marked above")

    def __init__(self, data=None, *, study: Study):
        self.study = study
        defaults = report_parameters(study=study)
        initial = {
            "language": "", "subsample": defaults.subsample, "seed": defaults.seed, "resamples": defaults.resamples,
            "exclude_flagged": False, **_threshold_values(defaults.thresholds),
        }  # fmt: skip
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
        thresholds = report_parameters(study=self.study).thresholds
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
                min_median_seconds=values["min_median_seconds"],
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
        "min_median_seconds": thresholds.min_median_seconds,
        "max_marked_share": thresholds.max_marked_share,
    }
