"""EmphaClass-like detector (MMEE section 3): a Wav2Vec2 / XLS-R encoder, fully fine-tuned, with a
linear head per frame: binary (two classes, cross-entropy, weighted by config.class_weights) and
scalar (linear + sigmoid, MSE). Training clips longer than config.max_seconds are cut to a random
window at each epoch; a window's frames keep the labels they have in the whole clip.
Frame labels come from the word times (modelzoo.training.pooling); padded frames are labelled -100 and
left out of both losses, so padding is never taught as "not emphasized". A word is emphasized
when more than half of its frames are; its scalar score is the mean of its frames' scores.
Untimed English clips are aligned first; untimed clips of other languages are refused.

Batches are padded up to whole length buckets (config.length_bucket_seconds), so that an epoch has
a few input shapes: a new padded length at every step made the convolutional front end build new
cuDNN plans at every step (12 % of the bare step's speed on an H200; one second buckets gave
107 %). The padding is masked (attention mask, padded frames zeroed before the positional
convolution, -100 labels), so real frames see the same values whatever the padding; backbones
trained without an attention mask (group norm, e.g. wav2vec2-base) would see it, and are padded
to the longest clip as before."""

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Self

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch import nn
from torch.utils.data import DataLoader, Dataset

from modelzoo.training import distributed
from modelzoo.training.alignment import ensure_word_times
from modelzoo.training.batching import (
    bucketed,
    grouped_loss,
    physical_batch_choose,
    physical_batch_line,
    probe_fits,
)
from modelzoo.training.checkpoints import backbone_path, load_wav2vec2, normalizes_audio
from modelzoo.training.config import FrameClassifierConfig
from modelzoo.training.data import SAMPLE_RATE, Clip
from modelzoo.training.detectors.base import (
    ClipPrediction,
    Detector,
    Progress,
    StopCheck,
    check_stop,
    prediction_rows,
    read_manifest,
    write_manifest,
)
from modelzoo.training.loop import (
    Trainer,
    autocast,
    choose_precision,
    pick_device,
    seeded_generator,
    set_seed,
    to_device,
    train_epochs,
    updates_per_epoch,
)
from modelzoo.training.metrics import score
from modelzoo.training.pooling import IGNORE, frame_targets, frames_to_words

HEADS_FILE = "heads.safetensors"


class FrameEmphasisModel(nn.Module):
    def __init__(self, backbone: nn.Module):
        super().__init__()
        self.backbone = backbone
        hidden = backbone.config.hidden_size
        self.binary_head = nn.Linear(hidden, 2)
        self.scalar_head = nn.Linear(hidden, 1)
        # Models with layer norm in the feature encoder (XLS-R) are trained with an attention mask;
        # group-norm ones (wav2vec2-base) were not, and must see zero padding instead.
        self.uses_attention_mask = backbone.config.feat_extract_norm == "layer"

    def forward(self, input_values: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(binary logits B x T x 2, scalar scores in [0, 1] B x T)."""
        mask = attention_mask if self.uses_attention_mask else None
        states = self.backbone(input_values, attention_mask=mask).last_hidden_state
        return self.binary_head(states), torch.sigmoid(self.scalar_head(states).squeeze(-1))


def frame_loss(
    binary_logits: torch.Tensor,
    scalar_scores: torch.Tensor,
    binary_targets: torch.Tensor,
    scalar_targets: torch.Tensor,
    *,
    binary_weight: float = 1.0,
    scalar_weight: float = 1.0,
    class_weights: tuple[float, float] = (1.0, 1.0),
) -> torch.Tensor:
    """Cross-entropy (weighted per class: not emphasized, emphasized) on the binary head plus MSE
    on the scalar head, both over real frames only (targets of -100 are padding)."""
    loss = binary_logits.new_zeros((), dtype=torch.float32)
    if binary_weight:
        weights = torch.tensor(class_weights, dtype=torch.float32, device=binary_logits.device)
        ce = F.cross_entropy(
            binary_logits.float().flatten(0, 1), binary_targets.flatten(), weight=weights, ignore_index=IGNORE
        )
        loss = loss + binary_weight * ce
    if scalar_weight:
        real = scalar_targets != IGNORE
        loss = loss + scalar_weight * F.mse_loss(scalar_scores.float()[real], scalar_targets[real])
    return loss


# --- frames ---


@dataclass(frozen=True)
class FrameGeometry:
    """How the convolutional front end turns samples into frames."""

    kernels: tuple[int, ...]
    strides: tuple[int, ...]

    @classmethod
    def of(cls, config) -> "FrameGeometry":
        return cls(tuple(config.conv_kernel), tuple(config.conv_stride))

    @property
    def frame_seconds(self) -> float:
        return math.prod(self.strides) / SAMPLE_RATE

    def frames(self, samples: int) -> int:
        for kernel, stride in zip(self.kernels, self.strides):
            samples = (samples - kernel) // stride + 1
        return max(samples, 0)


class FrameDataset(Dataset):
    """Per clip: its (normalized) samples and frame targets. With `max_seconds`, a clip longer
    than that is cut to a window of it starting at a random frame boundary (torch's random
    generator: seeded, and in each DataLoader worker its own); the window's targets are those
    frames' targets in the whole clip, so a word cut at the window's edge keeps its label on the
    frames that remain, and a word outside it has none."""

    def __init__(
        self, clips: Sequence[Clip], geometry: FrameGeometry, normalize: bool, max_seconds: float | None = None
    ):
        self.clips, self.geometry, self.normalize = list(clips), geometry, normalize
        self.max_samples = None if max_seconds is None else round(max_seconds * SAMPLE_RATE)

    def __len__(self) -> int:
        return len(self.clips)

    def __getitem__(self, index: int) -> dict:
        clip = self.clips[index]
        audio = clip.audio.astype(np.float32)
        frames = self.geometry.frames(len(audio))
        binary, scalar = frame_targets(clip.words, frames, self.geometry.frame_seconds)
        if self.max_samples is not None and len(audio) > self.max_samples:
            audio, binary, scalar = self.window(audio, binary, scalar)
        if self.normalize:  # zero mean, unit variance per clip, as XLS-R's feature extractor does
            audio = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)
        return {"audio": audio, "binary": binary, "scalar": scalar}

    def window(self, audio: np.ndarray, binary: np.ndarray, scalar: np.ndarray):
        hop = math.prod(self.geometry.strides)  # samples a frame: a start at k * hop begins at frame k
        first = int(torch.randint(0, (len(audio) - self.max_samples) // hop + 1, ()).item())
        audio = audio[first * hop : first * hop + self.max_samples]
        frames = self.geometry.frames(len(audio))
        return audio, binary[first : first + frames], scalar[first : first + frames]


def collate_frames(items: list[dict], geometry: FrameGeometry, bucket_samples: int | None = None) -> dict:
    """The items as one batch, padded to the longest clip, or up to whole buckets of
    `bucket_samples` past it; padding is zero audio, masked, with -100 labels."""
    longest = bucketed(max(len(item["audio"]) for item in items), bucket_samples)
    frames = geometry.frames(longest)
    batch = {
        "input_values": torch.zeros(len(items), longest),
        "attention_mask": torch.zeros(len(items), longest, dtype=torch.long),
        "binary": torch.full((len(items), frames), IGNORE, dtype=torch.long),
        "scalar": torch.full((len(items), frames), float(IGNORE)),
        "frames": torch.tensor([len(item["binary"]) for item in items]),
    }
    for row, item in enumerate(items):
        samples, count = len(item["audio"]), len(item["binary"])
        batch["input_values"][row, :samples] = torch.from_numpy(item["audio"])
        batch["attention_mask"][row, :samples] = 1
        batch["binary"][row, :count] = torch.from_numpy(item["binary"])
        batch["scalar"][row, :count] = torch.from_numpy(item["scalar"])
    return batch


class _Collate:
    """A picklable collate function (DataLoader workers may be separate processes)."""

    def __init__(self, geometry: FrameGeometry, bucket_samples: int | None = None):
        self.geometry, self.bucket_samples = geometry, bucket_samples

    def __call__(self, items: list[dict]) -> dict:
        return collate_frames(items, self.geometry, self.bucket_samples)


# --- the detector ---


class FrameClassifierDetector(Detector):
    kind = "frame-classifier"
    config_class = FrameClassifierConfig

    def __init__(self, backbone: str = "xls-r-1b", checkpoint_dir: Path | None = None):
        self.backbone, self.checkpoint_dir = backbone, checkpoint_dir
        self.config = FrameClassifierConfig()
        self.model: FrameEmphasisModel | None = None
        self.synced: nn.Module | None = None  # the model, in DistributedDataParallel under torchrun
        self.normalize = True
        self.history: list[dict] = []
        # how the last fit ran, beside its config: its batches, and the Whisper detector's cache
        self.runtime: dict = {}

    @property
    def geometry(self) -> FrameGeometry:
        return FrameGeometry.of(self.model.backbone.config)

    @property
    def device(self) -> torch.device:
        return pick_device(self.config.device)

    @property
    def bucket_samples(self) -> int | None:
        """Samples a length bucket holds; None (pad to the longest clip) when buckets are off, or
        when the backbone is not given the attention mask, so that more padding would change
        what it computes on the real frames."""
        seconds = self.config.length_bucket_seconds
        if seconds is None or not self.model.uses_attention_mask:
            return None
        return max(1, round(seconds * SAMPLE_RATE))

    def build(self, config: FrameClassifierConfig | None = None) -> FrameEmphasisModel:
        """The untrained model on its device: the pretrained backbone and fresh heads."""
        self.config = config or self.config
        set_seed(self.config.seed)
        path = backbone_path(self.backbone, self.checkpoint_dir, family="wav2vec2")
        self.normalize = normalizes_audio(path)
        backbone = load_wav2vec2(path)
        if self.config.freeze_feature_encoder:
            backbone.freeze_feature_encoder()
        if self.config.gradient_checkpointing:
            # Non-reentrant: the reentrant kind gives DDP (find_unused_parameters) each checkpointed
            # layer's gradients twice ("marked ready twice") once layerdrop has skipped a layer.
            backbone.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        self.model = FrameEmphasisModel(backbone).to(self.device)
        # wav2vec2 leaves parameters out of some steps (layerdrop, the masking embedding); see distributed.wrap
        self.synced = distributed.wrap(self.model, device=self.device, find_unused_parameters=True)
        return self.model

    def loader(self, clips: Sequence[Clip], *, training: bool) -> DataLoader:
        """Training: shuffled (seeded) batches of the physical batch size, long clips cropped;
        prediction: whole clips in order."""
        batch_size = self.config.loader_batch if training else self.config.eval_batch_size
        crop = self.config.max_seconds if training else None  # evaluation sees whole clips
        dataset = FrameDataset(clips, self.geometry, self.normalize, max_seconds=crop)
        sampler = distributed.training_sampler(dataset, seed=self.config.seed) if training else None
        return DataLoader(
            dataset,
            batch_size=batch_size,
            shuffle=training and sampler is None,
            sampler=sampler,
            collate_fn=_Collate(self.geometry, self.bucket_samples),
            num_workers=self.config.num_workers,
            generator=seeded_generator(self.config.seed),
            pin_memory=self.device.type == "cuda",
        )

    def loss(self, batch: dict) -> torch.Tensor:
        return self._loss(self.synced, batch)

    def _loss(self, model: nn.Module, batch: dict) -> torch.Tensor:
        """The loss of each configured batch (config.batch_size clips) in `batch`: a physical
        batch of several is scored as they would have been alone (batching.grouped_loss)."""
        binary_logits, scalar_scores = model(batch["input_values"], batch["attention_mask"])

        def loss_of(rows: slice) -> torch.Tensor:
            return frame_loss(
                binary_logits[rows],
                scalar_scores[rows],
                batch["binary"][rows],
                batch["scalar"][rows],
                binary_weight=self.config.binary_loss_weight,
                scalar_weight=self.config.scalar_loss_weight,
                class_weights=self.config.class_weights,
            )

        return grouped_loss(len(binary_logits), self.config.batch_size, loss_of)

    def physical_batch_set(self, train: Sequence[Clip], progress: Progress | None = None) -> int:
        """Resolve config.physical_batch ("auto": on CUDA, the largest that fits for the longest
        training clips) into the number of clips, kept in the config the run reports."""
        fits = None
        if self.device.type == "cuda":
            longest = sorted(train, key=lambda clip: clip.sample_count, reverse=True)[: self.config.effective_batch]
            parameters = [p for p in self.model.parameters() if p.requires_grad]
            fits = probe_fits(device=self.device, parameters=parameters, step=lambda size: self._probe(longest[:size]))
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
        """The loss of a training batch of `clips` (cropped as training crops), run outside DDP
        so that no rank waits for the others."""
        dataset = FrameDataset(clips, self.geometry, self.normalize, max_seconds=self.config.max_seconds)
        items = [dataset[index] for index in range(len(dataset))]
        batch = to_device(collate_frames(items, self.geometry, self.bucket_samples), self.device)
        self.model.train()
        with autocast(self.device, choose_precision(self.config.precision, self.device)):
            return self._loss(self.model, batch).sum()

    def trainer(self, total_updates: int) -> Trainer:
        parameters = [p for p in self.model.parameters() if p.requires_grad]
        return Trainer(
            parameters=parameters,
            loss_of=self.loss,
            config=self.config,
            device=self.device,
            total_updates=total_updates,
            synced=self.synced,
        )

    def fit(self, train, validation, config=None, progress=None, should_stop=None) -> Self:
        train = ensure_word_times(train, needed_by="The frame classifier")
        validation = ensure_word_times(validation, needed_by="The frame classifier")
        self.build(config)
        self.physical_batch_set(train, progress)
        loader = self.loader(train, training=True)
        epochs_updates = updates_per_epoch(len(loader), self.config) * self.config.epochs
        total = min(epochs_updates, self.config.max_steps or epochs_updates)

        def validate() -> dict:
            rows = prediction_rows(validation, self.predict(validation, should_stop=should_stop))
            return distributed.decided_on_main(lambda: score(rows, resamples=0))

        self.history = train_epochs(
            trainer=self.trainer(total),
            trainable=self.model,
            batches=lambda: loader,
            batch_count=len(loader),
            validate=validate,
            config=self.config,
            progress=progress,
            should_stop=should_stop,
        )
        return self

    @torch.no_grad()
    def predict(self, clips, progress: Progress | None = None, should_stop: StopCheck | None = None):
        if self.model is None:
            raise RuntimeError("the detector has not been trained or loaded")
        clips = ensure_word_times(clips, needed_by="The frame classifier")
        mine = self._predict_share(distributed.share(clips), progress, should_stop)  # under torchrun, a share
        return distributed.gather_shares(mine, len(clips))

    def _predict_share(self, clips, progress, should_stop) -> list[ClipPrediction]:
        self.model.eval()
        predictions, done = [], 0
        precision = choose_precision(self.config.precision, self.device)
        for batch in self.loader(clips, training=False):
            check_stop(should_stop)
            batch = to_device(batch, self.device)
            with autocast(self.device, precision):
                binary_logits, scalar_scores = self.model(batch["input_values"], batch["attention_mask"])
            frame_binary = binary_logits.argmax(-1).cpu().numpy()
            frame_scalar = scalar_scores.float().cpu().numpy()
            for row, frames in enumerate(batch["frames"].tolist()):
                clip = clips[done]
                binary, scalar = frames_to_words(
                    frame_binary[row, :frames], frame_scalar[row, :frames], clip.words, self.geometry.frame_seconds
                )
                predictions.append(ClipPrediction(clip.clip_id, binary, scalar))
                done += 1
            if progress is not None:
                progress("predicting", done, len(clips))
        return predictions

    def save(self, directory: Path) -> None:
        directory = Path(directory)
        self.model.backbone.save_pretrained(directory / "backbone")
        heads = {f"binary_head.{k}": v for k, v in self.model.binary_head.state_dict().items()}
        heads |= {f"scalar_head.{k}": v for k, v in self.model.scalar_head.state_dict().items()}
        save_file({k: v.contiguous().cpu() for k, v in heads.items()}, str(directory / HEADS_FILE))
        write_manifest(
            directory,
            kind=self.kind,
            config=self.config,
            backbone=self.backbone,
            normalize=self.normalize,
            history=self.history,
        )

    @classmethod
    def load(cls, directory: Path, *, checkpoint_dir: Path | None = None) -> Self:
        """The fine-tuned model is saved whole, so no checkpoint folder is needed."""
        directory = Path(directory)
        manifest = read_manifest(directory, cls.kind)
        detector = cls(manifest["backbone"], checkpoint_dir)
        detector.config = FrameClassifierConfig().with_overrides(manifest["config"])
        detector.normalize, detector.history = manifest["normalize"], manifest.get("history", [])
        model = FrameEmphasisModel(load_wav2vec2(directory / "backbone"))
        heads = load_file(str(directory / HEADS_FILE))
        model.binary_head.load_state_dict({k.split(".", 1)[1]: v for k, v in heads.items() if k.startswith("binary_")})
        model.scalar_head.load_state_dict({k.split(".", 1)[1]: v for k, v in heads.items() if k.startswith("scalar_")})
        detector.model = detector.synced = model.to(detector.device)
        return detector
