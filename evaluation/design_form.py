"""The study designer page's form (read from the query string: a design changes nothing)."""

from django import forms

from evaluation.services.study_designs import DEFAULT_REPLICATES, SOURCES
from evaluation.stats.study_designer import DesignAssumptions, ProbabilisticStopping, Targets

ASSUMED = ("emphasis_rate", "accuracy", "spammers", "heterogeneity", "heavy_share", "seconds_per_audio_second")
DEFAULTS = DesignAssumptions()
PROBABILISTIC = ProbabilisticStopping()


class StudyDesignForm(forms.Form):
    source = forms.ChoiceField(
        choices=[(s, s) for s in SOURCES],
        initial="assumptions",
        help_text="pilot: estimate the crowd from the study's own annotations so far (the fields below, when "
        "filled in, replace what the pilot gives); assumptions: the fields below.",
    )
    emphasis_rate = forms.FloatField(
        required=False, min_value=0, max_value=1, help_text=f"default {DEFAULTS.emphasis_rate}"
    )
    accuracy = forms.FloatField(
        required=False, min_value=0.5, max_value=1, help_text=f"an honest listener's; default {DEFAULTS.accuracy}"
    )
    spammers = forms.FloatField(
        required=False, min_value=0, max_value=1, help_text="share of annotations by random markers; default 0"
    )
    heterogeneity = forms.FloatField(
        required=False, min_value=0, max_value=1, help_text=f"intra-word correlation; default {DEFAULTS.heterogeneity}"
    )
    heavy_share = forms.FloatField(required=False, min_value=0, max_value=1, help_text="share of marks at level 2")
    seconds_per_audio_second = forms.FloatField(
        required=False,
        min_value=0.1,
        help_text=f"an annotation's time per second of audio; default {DEFAULTS.seconds_per_audio_second}",
    )
    hourly_rate = forms.FloatField(initial=DEFAULTS.hourly_rate, min_value=0, help_text="participants' pay an hour")
    kappa_width = forms.FloatField(
        initial=Targets().kappa_width, min_value=0, label="Widest kappa interval", help_text="95 % interval"
    )
    flip_share = forms.FloatField(
        initial=Targets().flip_share, min_value=0, max_value=1, label="Most labels flipped by one more listener"
    )
    epsilon = forms.FloatField(
        required=False,
        initial=PROBABILISTIC.epsilon,
        min_value=0.0001,
        max_value=0.5,
        label="Epsilon (probabilistic stopping)",
        help_text="a clip stops when every word's chance of another label at the target is below this",
    )
    minimum = forms.IntegerField(
        required=False,
        initial=PROBABILISTIC.minimum,
        min_value=1,
        label="Minimum annotators (probabilistic stopping)",
        help_text="fewest annotations a clip gets before it may stop",
    )
    replicates = forms.IntegerField(initial=DEFAULT_REPLICATES, min_value=2, max_value=200)

    def design_arguments(self) -> dict:
        data = self.cleaned_data
        given = {name: data[name] for name in ASSUMED if data.get(name) is not None}
        return {
            "source": data["source"],
            "assumptions": {**given, "hourly_rate": data["hourly_rate"]},
            "targets": {"kappa_width": data["kappa_width"], "flip_share": data["flip_share"]},
            # Left empty (a link from before these fields, say): the rule's defaults.
            "probabilistic": {name: data[name] for name in ("epsilon", "minimum") if data.get(name) is not None},
            "replicates": data["replicates"],
        }
