"""Training configurations. The defaults are MMEE's hyperparameters (section 3); every field can be
overridden, e.g. from the JSON a benchmark run was started with (`with_overrides`)."""

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Self

SELECTION_MEASURES = ("accuracy", "f1", "pearson")
# "auto": bf16 on a CUDA device that has it, fp16 with a gradient scaler on one that does not
# (V100, T4), full precision on the CPU; or one of the others, whatever the device.
PRECISIONS = ("auto", "bf16", "fp16", "fp32")
# physical_batch: "auto" (on CUDA, the largest that fits in memory; the configured batch_size
# elsewhere), "off" (batch_size), or a number of clips.
PHYSICAL_BATCH_CHOICES = ("auto", "off")
# feature_cache (the Whisper detector's frozen states): "auto", "device", "host" or "off".
FEATURE_CACHE_CHOICES = ("auto", "device", "host", "off")


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 1
    learning_rate: float = 1e-4
    warmup_ratio: float = 0.0  # share of the optimizer steps with a linearly rising learning rate
    weight_decay: float = 0.0
    batch_size: int = 8
    gradient_accumulation: int = 1
    eval_batch_size: int = 16
    max_grad_norm: float = 1.0
    seed: int = 0
    precision: str = "auto"  # mixed precision (PRECISIONS): autocast dtype, fp16 with a gradient scaler
    device: str = "auto"  # "auto" (CUDA when available), "cpu", "cuda", "cuda:1", ...
    num_workers: int = 0  # DataLoader worker processes preparing batches
    # The best checkpoint is the epoch with the highest pooled validation value of this measure.
    selection_measure: str = "f1"
    # Both heads train together on one backbone; a weight of 0 trains one mode alone, as the
    # paper does (binary: cross-entropy, scalar: MSE or BCE).
    binary_loss_weight: float = 1.0
    scalar_loss_weight: float = 1.0
    max_steps: int | None = None  # stop after this many optimizer steps (smoke tests, benchmarks)
    # The effective batch (batch_size x gradient_accumulation) run as fewer, larger physical
    # batches where memory allows: "auto" (CUDA: the largest that fits; elsewhere batch_size),
    # "off", or a number of clips (a multiple of batch_size that divides the effective batch).
    # The loss keeps batch_size's normalization, so the updates are the same
    # (modelzoo.training.loop.Trainer). A finished run's config holds the number chosen.
    physical_batch: int | str = "auto"

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}")
        if self.selection_measure not in SELECTION_MEASURES:
            raise ValueError(f"selection_measure must be one of {', '.join(SELECTION_MEASURES)}")
        if self.epochs < 1 or self.batch_size < 1 or self.gradient_accumulation < 1:
            raise ValueError("epochs, batch_size and gradient_accumulation must be at least 1")
        if (
            self.binary_loss_weight < 0
            or self.scalar_loss_weight < 0
            or not (self.binary_loss_weight or self.scalar_loss_weight)
        ):
            raise ValueError("the loss weights must be non-negative and not both 0")
        check_physical_batch(self.physical_batch, self.batch_size, self.gradient_accumulation)

    def with_overrides(self, overrides: dict | None) -> Self:
        overrides = _renamed(overrides or {})
        known = {field.name for field in fields(self)}
        unknown = sorted(set(overrides or {}) - known)
        if unknown:
            raise ValueError(f"unknown settings for {type(self).__name__}: {', '.join(unknown)}")
        # JSON has no tuples: a list given for a tuple field (class_weights, c_grid) becomes one
        values: dict[str, Any] = {
            key: tuple(value) if isinstance(value, list) else value for key, value in (overrides or {}).items()
        }
        return replace(self, **values)

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def effective_batch(self) -> int:
        return self.batch_size * self.gradient_accumulation

    @property
    def loader_batch(self) -> int:
        """Clips in one training batch: the physical batch when it is set, else batch_size."""
        return self.physical_batch if isinstance(self.physical_batch, int) else self.batch_size

    @property
    def batches_per_update(self) -> int:
        """Training batches of loader_batch clips between two optimizer updates."""
        return self.effective_batch // self.loader_batch


def check_physical_batch(physical, batch_size: int, accumulation: int) -> None:
    if physical in PHYSICAL_BATCH_CHOICES:
        return
    effective = batch_size * accumulation
    if (
        isinstance(physical, bool)
        or not isinstance(physical, int)
        or physical < batch_size
        or physical % batch_size
        or effective % physical
    ):
        raise ValueError(
            f'physical_batch must be "auto", "off" or a multiple of batch_size ({batch_size}) that divides '
            f"the effective batch batch_size x gradient_accumulation ({effective}); got {physical!r}"
        )


def _renamed(overrides: dict) -> dict:
    """Detectors saved before `precision` replaced `bf16` (True: bf16 on CUDA, False: off) load as before."""
    if "bf16" not in overrides:
        return overrides
    renamed = {key: value for key, value in overrides.items() if key != "bf16"}
    renamed.setdefault("precision", "auto" if overrides["bf16"] else "fp32")
    return renamed


def check_class_weights(weights: tuple[float, ...]) -> None:
    if len(weights) != 2 or not all(isinstance(w, int | float) and w > 0 for w in weights):
        raise ValueError("class_weights must be two positive numbers: not emphasized, emphasized (e.g. [1, 2.33])")


@dataclass(frozen=True)
class FrameClassifierConfig(TrainConfig):
    """EmphaClass: 15 epochs, lr 7.97e-5, 12.5 % warmup, batch 8 (4 for multilingual and arousal
    runs), gradient accumulation 3; the whole backbone is fine-tuned."""

    epochs: int = 15
    learning_rate: float = 7.97e-5
    warmup_ratio: float = 0.125
    batch_size: int = 8
    gradient_accumulation: int = 3
    eval_batch_size: int = 8
    freeze_feature_encoder: bool = False  # the convolutional front end; EmphaClass trains it too
    gradient_checkpointing: bool = False  # trades compute for memory on the 1B backbone
    # Training clips longer than this are cut to a random window of it at each epoch (memory);
    # validation and test clips are always whole. None keeps every clip whole.
    max_seconds: float | None = None
    # Weighted cross-entropy of the binary head (not emphasized, emphasized); MMEE's Whisper
    # detector uses (1.0, 2.33). Plain cross-entropy here, as EmphaClass.
    class_weights: tuple[float, float] = (1.0, 1.0)
    # Each batch is padded up to a whole number of these seconds, so that batches come in a few
    # shapes (the convolutional front end then reuses its cuDNN plans); None pads to the longest
    # clip. Padding is masked out: the outputs on real frames do not change (see the README).
    length_bucket_seconds: float | None = 1.0

    def __post_init__(self):
        super().__post_init__()
        check_class_weights(self.class_weights)
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise ValueError("max_seconds must be positive (or null: whole clips)")
        if self.length_bucket_seconds is not None and self.length_bucket_seconds <= 0:
            raise ValueError("length_bucket_seconds must be positive (or null: pad to the longest clip)")


@dataclass(frozen=True)
class WhisperTokenConfig(TrainConfig):
    """WhiStress: 2 epochs, lr 5e-4, 5 % warmup, weight decay 0.01, batch 32; frozen Whisper,
    one extra decoder block on the layer-9 hidden states."""

    epochs: int = 2
    learning_rate: float = 5e-4
    warmup_ratio: float = 0.05
    weight_decay: float = 0.01
    batch_size: int = 32
    eval_batch_size: int = 32
    hidden_layer: int = 9  # hidden_states index of encoder and decoder fed to the extra block (clamped to the depth)
    extra_block_init: str = "fresh"  # "fresh" (as WhiStress) or "copy" (of the backbone's next decoder layer)
    token_rule: str = "any"  # token -> word rule for binary labels (modelzoo.training.pooling.TOKEN_RULES)
    class_weights: tuple[float, float] = (1.0, 2.33)  # weighted cross-entropy, not emphasized / emphasized
    # A batch's token length is padded up to a multiple of this (1: to its longest transcript),
    # so that batches come in a few shapes; padding comes after every real token, which causal
    # attention never lets a real token see.
    token_bucket: int = 16
    # The frozen backbone's layer-9 states of each training and validation clip, computed once
    # per run and read in every epoch: "auto" (where they fit: the device, else host memory, and
    # only when a run sees its clips more than once), "device", "host" or "off". A finished
    # run's config holds the place chosen.
    feature_cache: str = "auto"

    def __post_init__(self):
        super().__post_init__()
        check_class_weights(self.class_weights)
        if self.extra_block_init not in ("fresh", "copy"):
            raise ValueError('extra_block_init must be "fresh" or "copy"')
        if isinstance(self.token_bucket, bool) or not isinstance(self.token_bucket, int) or self.token_bucket < 1:
            raise ValueError("token_bucket must be a whole number of tokens, at least 1")
        if self.feature_cache not in FEATURE_CACHE_CHOICES:
            raise ValueError(f"feature_cache must be one of {', '.join(FEATURE_CACHE_CHOICES)}")


@dataclass(frozen=True)
class AcousticConfig(TrainConfig):
    """Logistic regression (binary) and ridge regression (scalar) on prosodic word features; the
    regularization strength is chosen on the validation clips."""

    epochs: int = 1
    c_grid: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0)  # logistic regression's C
    alpha_grid: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)  # ridge's alpha
