"""What the neural detectors share: a pretrained backbone (named in modelzoo.training.detector_table)
with heads trained by modelzoo.training.loop. The skeleton is here (building the trainer, choosing
the physical batch, fit, predict under torchrun, save and load); each detector says what is its
own: its model and batches, its loss, the part it trains, how its outputs become word predictions
and which files hold its weights."""

from abc import abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Generic, Protocol, Self, TypeVar, cast

import torch
from torch import nn

from modelzoo.training import distributed
from modelzoo.training.batching import physical_batch_choose, physical_batch_line, probe_fits
from modelzoo.training.config import TrainConfig
from modelzoo.training.data import Clip
from modelzoo.training.detector_table import DETECTORS
from modelzoo.training.detectors.base import (
    ClipPrediction,
    Detector,
    Progress,
    StopCheck,
    prediction_rows,
    read_manifest,
    write_manifest,
)
from modelzoo.training.loop import (
    Trainer,
    autocast,
    choose_precision,
    pick_device,
    to_device,
    train_epochs,
    updates_per_epoch,
)
from modelzoo.training.metrics import score

ConfigT = TypeVar("ConfigT", bound=TrainConfig)  # the detector's config_class
ModelT = TypeVar("ModelT", bound=nn.Module)  # what its build() makes
NOT_BUILT = "the detector has not been trained or loaded"


class Batches(Protocol):
    """What the skeleton asks of a training loader (a DataLoader): its batches, and how many."""

    def __iter__(self) -> Iterator[dict]: ...

    def __len__(self) -> int: ...


def _named(value: str | None, what: str, kind: str) -> str:
    """`what` of `kind` in the detector table, which names it for every neural detector."""
    if value is None:
        raise LookupError(f"modelzoo.training.detector_table gives the {kind!r} detector no {what}")
    return value


class NeuralDetector(Detector, Generic[ConfigT, ModelT]):
    """Generic in its config class and its model, so that each detector's code reads its own
    config's fields and its model's parts."""

    config: ConfigT

    def __init__(self, backbone: str | None = None, checkpoint_dir: Path | None = None):
        self.backbone = backbone or _named(DETECTORS[self.kind].default_backbone, "default backbone", self.kind)
        self.checkpoint_dir = checkpoint_dir
        self.config = self._default_config()
        self._model: ModelT | None = None  # until build() or load()
        self.synced: nn.Module | None = None  # the model, in DistributedDataParallel under torchrun
        self.history: list[dict] = []
        # how the last fit ran, beside its config: its batches, and the Whisper detector's cache
        self.runtime: dict = {}

    def _default_config(self) -> ConfigT:
        """A config_class() with its defaults. config_class is ConfigT's class, which its
        declaration cannot say (a ClassVar holds no type variable)."""
        return cast(ConfigT, self.config_class())

    @property
    def model(self) -> ModelT:
        """The model that build() made or load() restored."""
        if self._model is None:
            raise RuntimeError(NOT_BUILT)
        return self._model

    @model.setter
    def model(self, model: ModelT) -> None:
        self._model = model

    @property
    def family(self) -> str:
        """The model_type its backbone must be (modelzoo.training.detector_table)."""
        return _named(DETECTORS[self.kind].family, "backbone family", self.kind)

    @property
    def device(self) -> torch.device:
        return pick_device(self.config.device)

    @property
    def precision(self) -> str:
        return choose_precision(self.config.precision, self.device)

    # --- what each detector says for itself ---

    @abstractmethod
    def build(self, config: ConfigT | None = None) -> ModelT:
        """The untrained model on its device (self.model, and self.synced for the training steps)."""

    @abstractmethod
    def loader(self, clips: Sequence[Clip], *, training: bool) -> Batches:
        """Training: shuffled batches of the physical batch size; prediction: the clips in order."""

    @abstractmethod
    def _loss(self, model: nn.Module, batch: dict) -> torch.Tensor:
        """The loss of each configured batch (config.batch_size clips) in `batch`."""

    @abstractmethod
    def trainable(self) -> nn.Module:
        """The part of the model that training changes (the whole of it, or the heads)."""

    @abstractmethod
    def _probe_size(self, clip: Clip) -> int:
        """How much memory the clip takes in a training step, relatively: the longest are probed."""

    @abstractmethod
    def _probe_batch(self, clips: Sequence[Clip]) -> dict:
        """A training batch of `clips`, on the host, made as the training loader makes it."""

    @abstractmethod
    def _clips(self, clips: Iterable[Clip]) -> list[Clip]:
        """The clips as the detector reads them (with word times where it needs them)."""

    @abstractmethod
    def _prediction_batches(self, clips: list[Clip]) -> Iterable[dict]:
        """This rank's share of `clips`, batched in order for prediction."""

    @abstractmethod
    def _predict_share(
        self, clips: list[Clip], batches: Iterable[dict], progress: Progress | None, should_stop: StopCheck | None
    ) -> list[ClipPrediction]:
        """The predictions for `clips` (this rank's share) from their `batches`."""

    @abstractmethod
    def _save_weights(self, directory: Path) -> None:
        """What was trained, into `directory` (it exists)."""

    @abstractmethod
    def _restore(self, directory: Path, manifest: dict, config: ConfigT) -> None:
        """The model saved in `directory` with `config`, on its device."""

    def _fit_batches(self, train, validation, loader: Batches, epoch_updates, progress, should_stop) -> Batches:
        """The training batches of every epoch: `loader`'s, unless the detector prepares others."""
        return loader

    def _fit_finished(self) -> None:
        """After training, whether it ended or failed: what it held for the fit only goes."""

    def _manifest_extra(self) -> dict:
        """What the detector's manifest holds besides its kind, config, backbone and history."""
        return {}

    # --- the skeleton ---

    def loss(self, batch: dict) -> torch.Tensor:
        return self._loss(self.synced, batch)

    def trainable_parameters(self) -> list[nn.Parameter]:
        return [p for p in self.trainable().parameters() if p.requires_grad]

    def trainer(self, total_updates: int) -> Trainer:
        return Trainer(
            parameters=self.trainable_parameters(),
            loss_of=self.loss,
            config=self.config,
            device=self.device,
            total_updates=total_updates,
            synced=self.synced,
        )

    def physical_batch_set(self, train: Sequence[Clip], progress: Progress | None = None) -> int:
        """Resolve config.physical_batch ("auto": on CUDA, the largest that fits for the largest
        training clips) into the number of clips, kept in the config the run reports."""
        fits = None
        if self.device.type == "cuda":
            longest = sorted(train, key=self._probe_size, reverse=True)[: self.config.effective_batch]
            fits = probe_fits(
                device=self.device,
                parameters=self.trainable_parameters(),
                step=lambda size: self._probe(longest[:size]),
            )
        size, reason = physical_batch_choose(self.config, self.device, fits=fits)
        self.config = replace(self.config, physical_batch=size)
        self.runtime["batches"] = {
            "physical": size,
            "per_update": self.config.batches_per_update,
            "effective": self.config.effective_batch,
            "reason": reason,
        }
        if progress is not None:
            progress(physical_batch_line(self.config, reason), 0, 1)
        return size

    def _probe(self, clips: Sequence[Clip]) -> torch.Tensor:
        """The loss of a training batch of `clips`, run outside DDP so that no rank waits for the others."""
        batch = to_device(self._probe_batch(clips), self.device)
        self.model.train()
        with autocast(self.device, self.precision):
            return self._loss(self.model, batch).sum()

    def fit(self, train, validation, config=None, progress=None, should_stop=None) -> Self:
        train, validation = self._clips(train), self._clips(validation)
        self.build(config)
        self.physical_batch_set(train, progress)
        loader = self.loader(train, training=True)
        epoch_updates = updates_per_epoch(len(loader), self.config)
        all_updates = epoch_updates * self.config.epochs
        total = min(all_updates, self.config.max_steps or all_updates)
        batches = self._fit_batches(train, validation, loader, epoch_updates, progress, should_stop)

        def validate() -> dict:
            rows = prediction_rows(validation, self.predict(validation, should_stop=should_stop))
            return distributed.decided_on_main(lambda: score(rows, resamples=0))

        try:
            self.history = train_epochs(
                trainer=self.trainer(total),
                trainable=self.trainable(),
                batches=lambda: batches,
                batch_count=len(batches),
                validate=validate,
                config=self.config,
                progress=progress,
                should_stop=should_stop,
            )
        finally:
            self._fit_finished()
        return self

    @torch.no_grad()
    def predict(self, clips, progress: Progress | None = None, should_stop: StopCheck | None = None):
        if self._model is None:  # before reading the clips (which may align them)
            raise RuntimeError(NOT_BUILT)
        clips = self._clips(clips)
        batches = self._prediction_batches(clips)
        mine = self._predict_share(distributed.share(clips), batches, progress, should_stop)  # a share under torchrun
        return distributed.gather_shares(mine, len(clips))

    def save(self, directory: Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self._save_weights(directory)
        extra = self._manifest_extra()
        write_manifest(
            directory, kind=self.kind, config=self.config, backbone=self.backbone, history=self.history, **extra
        )

    @classmethod
    def load(cls, directory: Path, *, checkpoint_dir: Path | None = None) -> Self:
        directory = Path(directory)
        manifest = read_manifest(directory, cls.kind)
        detector = cls(manifest["backbone"], checkpoint_dir)
        detector._restore(directory, manifest, detector._default_config().with_overrides(manifest["config"]))
        detector.history = manifest.get("history", [])
        return detector
