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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch import nn
from torch.utils.data import DataLoader, Dataset

from modelzoo.training import distributed
from modelzoo.training.alignment import ensure_word_times
from modelzoo.training.batching import bucketed, grouped_loss
from modelzoo.training.checkpoints import backbone_path, load_wav2vec2, normalizes_audio
from modelzoo.training.config import FrameClassifierConfig
from modelzoo.training.data import SAMPLE_RATE, Clip
from modelzoo.training.detectors.base import ClipPrediction, check_stop
from modelzoo.training.detectors.neural import NeuralDetector
from modelzoo.training.loop import autocast, seeded_generator, set_seed, to_device
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
            audio, binary, scalar = self.window(audio, binary, scalar, self.max_samples)
        if self.normalize:  # zero mean, unit variance per clip, as XLS-R's feature extractor does
            audio = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)
        return {"audio": audio, "binary": binary, "scalar": scalar}

    def window(self, audio: np.ndarray, binary: np.ndarray, scalar: np.ndarray, max_samples: int):
        hop = math.prod(self.geometry.strides)  # samples a frame: a start at k * hop begins at frame k
        first = int(torch.randint(0, (len(audio) - max_samples) // hop + 1, ()).item())
        audio = audio[first * hop : first * hop + max_samples]
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


class FrameClassifierDetector(NeuralDetector[FrameClassifierConfig, FrameEmphasisModel]):
    kind = "frame-classifier"
    config_class = FrameClassifierConfig

    def __init__(self, backbone: str | None = None, checkpoint_dir: Path | None = None):
        super().__init__(backbone, checkpoint_dir)
        self.normalize = True

    @property
    def geometry(self) -> FrameGeometry:
        return FrameGeometry.of(self.model.backbone.config)

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
        path = backbone_path(self.backbone, self.checkpoint_dir, family=self.family)
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

    def trainable(self) -> nn.Module:
        return self.model  # fully fine-tuned

    def _probe_size(self, clip: Clip) -> int:
        return clip.sample_count

    def _probe_batch(self, clips: Sequence[Clip]) -> dict:
        """Cropped as training crops."""
        dataset = FrameDataset(clips, self.geometry, self.normalize, max_seconds=self.config.max_seconds)
        items = [dataset[index] for index in range(len(dataset))]
        return collate_frames(items, self.geometry, self.bucket_samples)

    def _clips(self, clips) -> list[Clip]:
        return ensure_word_times(clips, needed_by="The frame classifier")

    def _prediction_batches(self, clips: list[Clip]) -> DataLoader:
        return self.loader(distributed.share(clips), training=False)

    def _predict_share(self, clips, batches, progress, should_stop) -> list[ClipPrediction]:
        self.model.eval()
        predictions, done = [], 0
        precision = self.precision
        for batch in batches:
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

    def _save_weights(self, directory: Path) -> None:
        self.model.backbone.save_pretrained(directory / "backbone")
        heads = {f"binary_head.{k}": v for k, v in self.model.binary_head.state_dict().items()}
        heads |= {f"scalar_head.{k}": v for k, v in self.model.scalar_head.state_dict().items()}
        save_file({k: v.contiguous().cpu() for k, v in heads.items()}, str(directory / HEADS_FILE))

    def _manifest_extra(self) -> dict:
        return {"normalize": self.normalize}

    def _restore(self, directory: Path, manifest: dict, config: FrameClassifierConfig) -> None:
        """The fine-tuned model is saved whole, so no checkpoint folder is needed."""
        self.config, self.normalize = config, manifest["normalize"]
        model = FrameEmphasisModel(load_wav2vec2(directory / "backbone"))
        heads = load_file(str(directory / HEADS_FILE))
        model.binary_head.load_state_dict({k.split(".", 1)[1]: v for k, v in heads.items() if k.startswith("binary_")})
        model.scalar_head.load_state_dict({k.split(".", 1)[1]: v for k, v in heads.items() if k.startswith("scalar_")})
        self.model = self.synced = model.to(self.device)
