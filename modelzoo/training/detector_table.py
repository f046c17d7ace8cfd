"""The detectors, each declared once: the name a benchmark run gives, the label the admin and the
API offer it under, its configuration, its default backbone and the model family that backbone
must be, whether it trains on a GPU, and where its implementation lives. The registry
(modelzoo.training.detectors), the launch checks (modelzoo.plans), the checkpoint folder's checks
(modelzoo.training.checkpoints), the benchmark and BenchmarkRun.Detector's choices (the admin's
form, the API) all read this table, so a new detector is one row here and its module.

No torch: the web side reads this table to check a launch; an implementation is named by its
dotted path and imported only when a worker builds it (modelzoo.training.detectors)."""

from dataclasses import dataclass

from modelzoo.training.config import AcousticConfig, FrameClassifierConfig, TrainConfig, WhisperTokenConfig


@dataclass(frozen=True)
class DetectorSpec:
    name: str  # what a benchmark run's `detector` holds, and a saved detector's manifest its "kind"
    label: str  # the choice's label in the admin's form and the API
    config_class: type[TrainConfig]
    implementation: str  # "module:Class", imported only when asked for (it may import torch)
    default_backbone: str | None = None  # a name in checkpoints.REGISTRY; None: it has no backbone
    family: str | None = None  # the model_type (config.json) its backbone must be
    needs_gpu: bool = True  # False: trains on the CPU, in one process (so on one device)

    @property
    def has_backbone(self) -> bool:
        return self.default_backbone is not None

    @property
    def short_label(self) -> str:
        """The label without its parenthesis, for messages ("the acoustic baseline has no backbone")."""
        return self.label.split(" (")[0]

    @property
    def choice_name(self) -> str:
        """The member's name in BenchmarkRun.Detector ("frame-classifier": FRAME_CLASSIFIER)."""
        return self.name.upper().replace("-", "_")


DETECTORS: dict[str, DetectorSpec] = {
    spec.name: spec
    for spec in (
        DetectorSpec(
            name="acoustic",
            label="acoustic baseline (Praat features, linear models)",
            config_class=AcousticConfig,
            implementation="modelzoo.training.detectors.acoustic:AcousticDetector",
            needs_gpu=False,
        ),
        DetectorSpec(
            name="frame-classifier",
            label="frame classifier (EmphaClass-like, XLS-R)",
            config_class=FrameClassifierConfig,
            implementation="modelzoo.training.detectors.frame_classifier:FrameClassifierDetector",
            default_backbone="xls-r-1b",
            family="wav2vec2",
        ),
        DetectorSpec(
            name="whisper-tokens",
            label="Whisper token classifier (WhiStress-like)",
            config_class=WhisperTokenConfig,
            implementation="modelzoo.training.detectors.whisper_tokens:WhisperTokenDetector",
            default_backbone="whisper-small",
            family="whisper",
        ),
    )
}


def detector_spec(name: str) -> DetectorSpec:
    """The row of `name`; ValueError naming the detectors there are for any other."""
    if name not in DETECTORS:
        raise ValueError(f"unknown detector {name!r}; one of {', '.join(DETECTORS)}")
    return DETECTORS[name]
