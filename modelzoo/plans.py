"""What a benchmark launch trains: a setting and its parameters expanded into one Setting per
model, and the hyperparameters a label mode implies. Pure: no Django, no torch (only the
torch-free declarations of modelzoo.training), so the web side checks a launch before a GPU
worker ever sees it.

A launch asks for one of the MMEE settings with its parameters ("plan"):
- monolingual: `languages` (default: every language with train, validation and test clips), one
  model each;
- cross-lingual: `languages` to train on (same default), one model each, tested on every other
  language: the rows of the matrix. With `with_diagonal` (the default) each language also gets a
  monolingual model, the matrix's diagonal;
- multilingual: one model on all languages;
- cross-arousal: `train_arousal` and `test_arousal`, or, without them, both directions;
- data-scale: `percents` (default: the label set's nested steps), optionally one `language`;
- cross-dataset: a second label set to test on, optionally `language` and `test_language`.
`by="variety"` reads languages as regional varieties.
"""

from dataclasses import dataclass, fields

from modelzoo.training.detector_table import detector_spec
from modelzoo.training.experiments import KINDS, Setting

# A mode trains one head alone, as MMEE does (a loss weight of 0), and keeps the epoch that did
# best on its own measure; "both" trains the two heads together, the detectors' default.
LABEL_MODES = {
    "binary": {"scalar_loss_weight": 0.0, "selection_measure": "f1"},
    "scalar": {"binary_loss_weight": 0.0, "selection_measure": "pearson"},
    "both": {},
}
MODE_MEASURES = {"binary": ("accuracy", "f1"), "scalar": ("pearson",), "both": ("accuracy", "f1", "pearson")}
AROUSAL_DIRECTIONS = (("high", "low"), ("low", "high"))


@dataclass(frozen=True)
class Plan:
    kind: str
    languages: tuple[str, ...] = ()
    language: str = ""  # data-scale and cross-dataset: train on this language only
    test_language: str = ""  # cross-dataset
    by: str = "language"
    with_diagonal: bool = True  # cross-lingual: monolingual models for the matrix's diagonal
    train_arousal: str = ""
    test_arousal: str = ""
    percents: tuple[int, ...] = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown setting {self.kind!r}; one of {', '.join(KINDS)}")
        if self.by not in ("language", "variety"):
            raise ValueError('"by" must be "language" or "variety"')
        if any(not 0 < percent <= 100 for percent in self.percents):
            raise ValueError("data-scale percentages must be in (0, 100]")
        if bool(self.train_arousal) != bool(self.test_arousal):
            raise ValueError("give both train_arousal and test_arousal, or neither (for both directions)")

    @classmethod
    def from_dict(cls, values: dict) -> "Plan":
        """A plan from JSON: Setting's own single `language` or `percent` are read as a list of one."""
        values = dict(values)
        if values.get("kind") in ("monolingual", "cross-lingual") and values.get("language"):
            values["languages"] = [values.pop("language")]
        if "percent" in values:
            values["percents"] = [values.pop("percent")]
        known = {item.name for item in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown setting parameters: {', '.join(unknown)}")
        for name in ("languages", "percents"):
            if name in values:
                values[name] = tuple(values[name] or ())
        return cls(**values)


def plan_settings(plan: Plan, *, languages: list[str], scale_steps: list[int]) -> list[dict]:
    """One Setting (as a dict) per model to train. `languages` are those the set can train and
    test on (the default), `scale_steps` its nested data-scale steps."""
    by = plan.by
    chosen = list(plan.languages) or list(languages)
    if plan.kind in ("monolingual", "cross-lingual") and not chosen:
        raise ValueError("no language of this set has train, validation and test clips")
    if plan.kind == "monolingual":
        settings = [Setting("monolingual", language=code, by=by) for code in chosen]
    elif plan.kind == "cross-lingual":
        settings = [Setting("cross-lingual", language=code, by=by) for code in chosen]
        if plan.with_diagonal:
            settings += [Setting("monolingual", language=code, by=by) for code in chosen]
    elif plan.kind == "multilingual":
        settings = [Setting("multilingual", by=by)]
    elif plan.kind == "cross-arousal":
        directions = [(plan.train_arousal, plan.test_arousal)] if plan.train_arousal else AROUSAL_DIRECTIONS
        settings = [Setting("cross-arousal", train_arousal=a, test_arousal=b, by=by) for a, b in directions]
    elif plan.kind == "data-scale":
        percents = list(plan.percents) or list(scale_steps)
        settings = [Setting("data-scale", percent=int(p), language=plan.language, by=by) for p in percents]
    else:
        settings = [Setting("cross-dataset", language=plan.language, test_language=plan.test_language, by=by)]
    return [setting.as_dict() for setting in settings]


def run_overrides(*, detector: str, label_mode: str, overrides: dict | None) -> dict:
    """The hyperparameter overrides a run is started with: the label mode's, then the caller's
    (which win); ValueError, naming the field, for a detector, mode or field that does not exist."""
    spec = detector_spec(detector)
    if label_mode not in LABEL_MODES:
        raise ValueError(f"unknown label mode {label_mode!r}; one of {', '.join(LABEL_MODES)}")
    if overrides is not None and not isinstance(overrides, dict):
        raise ValueError("the hyperparameter overrides must be a JSON object")
    merged = {**LABEL_MODES[label_mode], **(overrides or {})}
    spec.config_class().with_overrides(merged)  # raises on an unknown field or a bad value
    return merged


def check_backbone(detector: str, backbone: str) -> str:
    """The backbone name as given (blank: the detector's default), refused where it cannot be one:
    the acoustic baseline has none, and a name is a folder inside the checkpoint folder."""
    backbone = backbone.strip()
    spec = detector_spec(detector)
    if backbone and not spec.has_backbone:
        raise ValueError(f"the {spec.short_label} has no backbone")
    if backbone.startswith("/") or ".." in backbone.split("/"):
        raise ValueError("a backbone is a registry name or a folder inside the checkpoint folder")
    return backbone
