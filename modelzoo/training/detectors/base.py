"""What every detector offers, and what passes between it and the benchmark. No torch here."""

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from modelzoo.training.config import TrainConfig
from modelzoo.training.data import Clip

# progress(phase, done, total): the signature of annotation.shared.jobs' progress writer
Progress = Callable[[str, int, int], None]
StopCheck = Callable[[], bool]
MANIFEST = "detector.json"


class Cancelled(Exception):
    """The caller's stop check said to stop; raised between training or prediction steps."""


@dataclass(frozen=True)
class ClipPrediction:
    """Per-word predictions for one clip, in word order."""

    clip_id: str
    binary: list[int]
    scalar: list[float]


class Detector(ABC):
    kind: ClassVar[str]
    config_class: ClassVar[type[TrainConfig]]

    config: TrainConfig
    history: list[dict]  # per epoch: loss, validation measures, whether it was kept as the best

    @abstractmethod
    def __init__(self, backbone: str | None = None, checkpoint_dir: Path | None = None):
        """Every kind is made so (run_benchmark, load_detector): its backbone's name, where checkpoints are."""

    @abstractmethod
    def fit(
        self,
        train: Sequence[Clip],
        validation: Sequence[Clip],
        config: TrainConfig | None = None,
        progress: Progress | None = None,
        should_stop: StopCheck | None = None,
    ) -> Self:
        """Train on `train`, keep the state that did best on `validation`; returns self."""

    @abstractmethod
    def predict(
        self, clips: Sequence[Clip], progress: Progress | None = None, should_stop: StopCheck | None = None
    ) -> list[ClipPrediction]:
        """Predictions for every word of every clip, in the clips' order."""

    @abstractmethod
    def save(self, directory: Path) -> None: ...

    @classmethod
    @abstractmethod
    def load(cls, directory: Path, *, checkpoint_dir: Path | None = None) -> Self: ...


def prediction_rows(clips: Sequence[Clip], predictions: Sequence[ClipPrediction]) -> list[dict]:
    """One row per word: the clip, the word, its labels and the predictions (what metrics.score
    reads and what a results page lists)."""
    rows = []
    for clip, prediction in zip(clips, predictions, strict=True):
        if prediction.clip_id != clip.clip_id or len(prediction.binary) != len(clip.words):
            raise ValueError(f"the predictions for clip {clip.clip_id!r} do not match its words")
        for index, (word, binary, scalar) in enumerate(zip(clip.words, prediction.binary, prediction.scalar)):
            rows.append(
                {
                    "clip_id": clip.clip_id,
                    "language": clip.language,
                    "variety": clip.variety,
                    "word_index": index,
                    "word": word.text,
                    "binary_true": int(word.binary),
                    "binary_pred": int(binary),
                    "scalar_true": float(word.scalar),
                    "scalar_pred": float(scalar),
                }
            )
    return rows


def check_stop(should_stop: StopCheck | None) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled("stopped on request")


def write_manifest(directory: Path, *, kind: str, config: TrainConfig, **extra) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    manifest = {"kind": kind, "config": config.as_dict(), **extra}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def read_manifest(directory: Path, kind: str) -> dict:
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"no trained detector in {directory} ({MANIFEST} is missing)")
    manifest = json.loads(path.read_text())
    if manifest.get("kind") != kind:
        raise ValueError(f"{directory} holds a {manifest.get('kind')!r} detector, not a {kind!r} one")
    return manifest
