"""WhiStress-like detector (MMEE section 3): a frozen Whisper encoder-decoder reads the clip and its
transcript (teacher-forced: the decoder is given the words, it does not transcribe), ONE extra
decoder block takes the decoder's hidden states at layer 9 and cross-attends to the encoder's
hidden states at layer 9, and an MLP head per token gives the emphasis: binary (two classes,
cross-entropy weighted [1, 2.33]) and scalar (one logit, BCE against the scalar label).

The prompt is <|startoftranscript|> <|language|> <|transcribe|> <|notimestamps|> (an English-only
checkpoint has no language and task tokens), then each word's tokens, encoded with its leading
space as Whisper writes words. Every token of a word carries the word's label; back at the word
level (modelzoo.training.pooling.tokens_to_words), a word is emphasized when ANY of its tokens is
(WhiStress's merge of sub-word tokens; config.token_rule can choose "first" or "mean"), and its
scalar score is the mean over its tokens. No word times are needed.

"Layer 9" is the index into Hugging Face's hidden_states (0 = embeddings, 9 = the output of the
ninth layer); it is clamped to the depth of smaller models, whose last layer is then used.

The data path (modelzoo/training/README.md, "The Whisper loader", has the profile behind it):
- each clip's log-mel is computed on the CPU, in the loader's workers, over Whisper's whole
  window (30 s) as the feature extractor does, then cut after the clip's last frame: the frames
  after it all hold one value (the log-mel floor of the zero padding), which travels beside the
  cut features; the model puts the window back on the device (features_to_window), bit for bit
  the extractor's output. A batch then carries the clips' frames only (about 1/5 of the bytes for
  5 s clips), padded up to whole seconds;
- a batch's tokens are padded up to a multiple of config.token_bucket (right padding, which
  causal attention hides from every real token), so batches come in a few shapes;
- the backbone is frozen, so its layer-9 states of a clip are the same in every epoch: with
  config.feature_cache they are computed once per run (training and validation clips) and every
  epoch trains the extra block and heads on them (StatesCache), with the same batches in the
  same order as without it.
"""

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Self

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch import nn
from torch.utils.data import DataLoader, Dataset

from modelzoo.training import distributed
from modelzoo.training.batching import available_host_bytes, bucketed, grouped_loss
from modelzoo.training.checkpoints import backbone_path, load_whisper
from modelzoo.training.config import WhisperTokenConfig
from modelzoo.training.data import SAMPLE_RATE, Clip
from modelzoo.training.detectors.base import ClipPrediction, Progress, StopCheck, check_stop
from modelzoo.training.detectors.neural import NOT_BUILT, NeuralDetector
from modelzoo.training.loop import autocast, seeded_generator, set_seed, to_device
from modelzoo.training.pooling import IGNORE, tokens_to_words

HEAD_FILE = "head.safetensors"
# The feature cache: the share of the free device (or available host) memory it may take, the
# places in the order ranks fall back through, and a transcript's tokens in the size estimate.
CACHE_MEMORY_SHARE = 0.5
CACHE_PLACES = ("off", "host", "device")
ESTIMATED_TOKENS = 64


def mlp_head(width: int, outputs: int) -> nn.Sequential:
    """WhiStress's classifier: one hidden layer twice as wide, ReLU."""
    return nn.Sequential(nn.Linear(width, 2 * width), nn.ReLU(), nn.Linear(2 * width, outputs))


class WhisperTokenModel(nn.Module):
    def __init__(self, backbone: nn.Module, *, hidden_layer: int = 9, extra_block_init: str = "fresh"):
        super().__init__()
        from transformers.models.whisper.modeling_whisper import WhisperDecoderLayer

        config = backbone.config
        self.backbone = backbone.eval().requires_grad_(False)
        encoder = backbone.encoder  # its input: log-mel frames of the whole window (3000 for 30 s)
        self.window_frames = config.max_source_positions * encoder.conv1.stride[0] * encoder.conv2.stride[0]
        self.decoder_layer = min(hidden_layer, config.decoder_layers)
        self.encoder_layer = min(hidden_layer, config.encoder_layers)
        if extra_block_init == "copy":
            # the backbone layer that would read these states next (the last one, above the top)
            source = backbone.decoder.layers[min(self.decoder_layer, config.decoder_layers - 1)]
            self.extra_block = copy.deepcopy(source).requires_grad_(True)
        else:
            self.extra_block = WhisperDecoderLayer(config, layer_idx=config.decoder_layers)
        self.binary_head = mlp_head(config.d_model, 2)
        self.scalar_head = mlp_head(config.d_model, 1)

    def train(self, mode: bool = True) -> Self:
        super().train(mode)
        self.backbone.eval()  # frozen: no dropout in it, ever
        return self

    def head_modules(self) -> nn.ModuleDict:
        """What training changes (and what is saved): the extra block and the heads."""
        return nn.ModuleDict(
            {"extra_block": self.extra_block, "binary_head": self.binary_head, "scalar_head": self.scalar_head}
        )

    def chosen_hidden_states(
        self, input_features, decoder_input_ids, features_fill=None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The frozen backbone's (decoder, encoder) states at the chosen layers. Features cut to
        the clips (features_fill given: each clip's value of the frames after it) are put back
        to the whole window first."""
        if features_fill is not None:
            input_features = features_to_window(input_features, features_fill, self.window_frames)
        with torch.no_grad():
            out = self.backbone(
                input_features=input_features,
                decoder_input_ids=decoder_input_ids,
                output_hidden_states=True,
                use_cache=False,
            )
        return out.decoder_hidden_states[self.decoder_layer], out.encoder_hidden_states[self.encoder_layer]

    def forward(
        self,
        input_features: torch.Tensor | None = None,
        decoder_input_ids: torch.Tensor | None = None,
        features_fill: torch.Tensor | None = None,
        *,
        decoder_states: torch.Tensor | None = None,
        encoder_states: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(binary logits B x T x 2, scalar logits B x T) per decoder position: from the clips'
        features and tokens, or from the backbone's states computed before (the feature cache)."""
        if decoder_states is None:
            decoder_states, encoder_states = self.chosen_hidden_states(input_features, decoder_input_ids, features_fill)
        # transformers 5 returns the layer's hidden states as a tensor (4.x returned a tuple)
        states = self.extra_block(
            decoder_states,
            attention_mask=causal_mask(decoder_states),
            encoder_hidden_states=encoder_states,
            use_cache=False,
        )
        return self.binary_head(states), self.scalar_head(states).squeeze(-1)


def causal_mask(states: torch.Tensor) -> torch.Tensor:
    """Additive B x 1 x T x T mask: each token sees itself and the tokens before it, like the
    decoder it sits on. Given explicitly, since with no mask some attention implementations
    would let tokens see the padding that follows them."""
    length = states.shape[1]
    blocked = torch.ones(length, length, dtype=torch.bool, device=states.device).triu(1)
    mask = torch.zeros(length, length, dtype=states.dtype, device=states.device)
    mask = mask.masked_fill(blocked, torch.finfo(states.dtype).min)
    return mask.expand(states.shape[0], 1, length, length)


def token_loss(
    binary_logits,
    scalar_logits,
    binary_targets,
    scalar_targets,
    *,
    class_weights=(1.0, 2.33),
    binary_weight: float = 1.0,
    scalar_weight: float = 1.0,
) -> torch.Tensor:
    """Weighted cross-entropy (binary) plus BCE (scalar), over word tokens only (-100 elsewhere)."""
    loss = binary_logits.new_zeros((), dtype=torch.float32)
    if binary_weight:
        weights = torch.tensor(class_weights, dtype=torch.float32, device=binary_logits.device)
        ce = F.cross_entropy(
            binary_logits.float().flatten(0, 1), binary_targets.flatten(), weight=weights, ignore_index=IGNORE
        )
        loss = loss + binary_weight * ce
    if scalar_weight:
        real = scalar_targets != IGNORE
        bce = F.binary_cross_entropy_with_logits(scalar_logits.float()[real], scalar_targets[real])
        loss = loss + scalar_weight * bce
    return loss


# --- tokens ---


@dataclass(frozen=True)
class TokenizedClip:
    ids: list[int]
    word_of_token: list[int]  # the word index of each token; -1 for the prompt


class WordTokenizer:
    """Whisper prompts and word tokens from a Whisper tokenizer (or any tokenizer with the same
    special tokens)."""

    def __init__(self, tokenizer, max_tokens: int):
        self.tokenizer, self.max_tokens = tokenizer, max_tokens

    @cached_property
    def vocabulary(self) -> dict[str, int]:
        return self.tokenizer.get_vocab()

    @cached_property
    def multilingual(self) -> bool:
        return "<|en|>" in self.vocabulary

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return pad if pad is not None else self.vocabulary["<|endoftext|>"]

    def prompt(self, language: str) -> list[int]:
        names = ["<|startoftranscript|>"]
        if self.multilingual:
            code = language.split("-", maxsplit=1)[0].lower()
            if code:
                if f"<|{code}|>" not in self.vocabulary:
                    raise ValueError(f"the Whisper tokenizer has no language token for {language!r} (<|{code}|>)")
                names.append(f"<|{code}|>")
            names.append("<|transcribe|>")
        names.append("<|notimestamps|>")
        missing = [name for name in names if name not in self.vocabulary]
        if missing:
            raise ValueError(f"the tokenizer lacks Whisper's special tokens: {', '.join(missing)}")
        return [self.vocabulary[name] for name in names]

    def encode(self, words: Sequence[str], language: str) -> TokenizedClip:
        ids = self.prompt(language)
        word_of_token = [-1] * len(ids)
        for index, text in enumerate(words):
            # " word": byte-level BPE splits at spaces first, so a word's tokens are the same alone
            # as inside the sentence, and every token is known to belong to one word
            tokens = self.tokenizer.encode(" " + text.strip(), add_special_tokens=False)
            ids += tokens
            word_of_token += [index] * len(tokens)
        # past the decoder's length limit words get no tokens (and predictions of 0)
        return TokenizedClip(ids[: self.max_tokens], word_of_token[: self.max_tokens])


def features_cut(features: np.ndarray) -> tuple[np.ndarray, np.float32]:
    """A clip's log-mel over the window (mel x frames) without the frames after the clip: those
    all hold one value (the floor the extractor gives zero padding), returned beside them. The
    check is exact, so a clip that fills the window, or an extractor that dithers, is kept whole."""
    fill = features[0, -1]
    varying = np.flatnonzero((features != fill).any(axis=0))
    end = int(varying[-1]) + 1 if varying.size else 1
    return np.ascontiguousarray(features[:, :end]), np.float32(fill)


def features_to_window(features: torch.Tensor, fill: torch.Tensor, frames: int) -> torch.Tensor:
    """Cut features (B x mel x L, each row filled past its clip with its value in `fill`) back to
    the window's `frames`: the feature extractor's output, bit for bit."""
    missing = frames - features.shape[-1]
    if missing <= 0:
        return features
    tail = fill.to(features.dtype)[:, None, None].expand(features.shape[0], features.shape[1], missing)
    return torch.cat([features, tail], dim=-1)


def transcript_length(clip: Clip) -> int:
    """Characters of the clip's transcript: how long its tokens are, without tokenizing it."""
    return sum(len(word.text) + 1 for word in clip.words)


class TokenDataset(Dataset):
    def __init__(self, clips: Sequence[Clip], feature_extractor, tokenizer: WordTokenizer):
        self.clips, self.feature_extractor, self.tokenizer = list(clips), feature_extractor, tokenizer

    def __len__(self) -> int:
        return len(self.clips)

    def __getitem__(self, index: int) -> dict:
        clip = self.clips[index]
        # clips longer than the extractor's window (30 s for real Whisper) are cut there
        window = self.feature_extractor(clip.audio, sampling_rate=SAMPLE_RATE, return_tensors="np").input_features[0]
        features, fill = features_cut(window)
        return {"features": features, "fill": fill, **token_labels(self.tokenizer, clip)}


def token_labels(tokenizer: WordTokenizer, clip: Clip) -> dict:
    """The clip's prompt and word tokens, each token's word (-1: the prompt) and its labels."""
    tokenized = tokenizer.encode([word.text for word in clip.words], clip.language)
    word = np.array(tokenized.word_of_token)
    binary = np.array([clip.words[w].binary if w >= 0 else IGNORE for w in word], dtype=np.int64)
    scalar = np.array([clip.words[w].scalar if w >= 0 else IGNORE for w in word], dtype=np.float32)
    return {"ids": np.array(tokenized.ids), "word": word, "binary": binary, "scalar": scalar}


# log-mel frames a batch's cut features are padded up to a multiple of (one second)
FEATURE_BUCKET = 100


def padded_rows(rows: Sequence, length: int, value, dtype: torch.dtype) -> torch.Tensor:
    """1-D rows (arrays or tensors) as one len(rows) x length tensor, right-padded with `value`."""
    out = torch.full((len(rows), length), value, dtype=dtype)
    for index, row in enumerate(rows):
        out[index, : len(row)] = torch.as_tensor(row).to(dtype)
    return out


def token_fields(items: Sequence[dict], length: int) -> dict:
    """Each token's word (-1 on the prompt and padding) and labels (-100 there), padded to `length`."""
    return {
        "word": padded_rows([item["word"] for item in items], length, -1, torch.long),
        "binary": padded_rows([item["binary"] for item in items], length, IGNORE, torch.long),
        "scalar": padded_rows([item["scalar"] for item in items], length, IGNORE, torch.float32),
        "tokens": torch.tensor([len(item["word"]) for item in items]),
    }


class _Collate:
    """Items into a batch (picklable: DataLoader workers may be other processes). The tokens are
    right-padded up to a multiple of `token_bucket` (at most `max_tokens`); the cut features up to
    whole seconds (at most `window_frames`), each clip's rows with its own fill value, so that the
    model's features_to_window gives the extractor's output."""

    def __init__(
        self, pad_id: int, token_bucket: int = 1, max_tokens: int | None = None, window_frames: int | None = None
    ):
        self.pad_id, self.token_bucket, self.max_tokens = pad_id, token_bucket, max_tokens
        self.window_frames = window_frames

    def __call__(self, items: list[dict]) -> dict:
        # right padding: with causal attention no real token ever sees it
        length = bucketed(max(len(item["ids"]) for item in items), self.token_bucket, self.max_tokens)
        frames = bucketed(max(item["features"].shape[-1] for item in items), FEATURE_BUCKET, self.window_frames)
        fill = torch.tensor([float(item["fill"]) for item in items], dtype=torch.float32)
        features = fill[:, None, None].repeat(1, items[0]["features"].shape[0], frames)
        for row, item in enumerate(items):
            features[row, :, : item["features"].shape[-1]] = torch.from_numpy(item["features"])
        return {
            "input_features": features,
            "features_fill": fill,
            "decoder_input_ids": padded_rows([item["ids"] for item in items], length, self.pad_id, torch.long),
            **token_fields(items, length),
        }


# --- the feature cache ---


@dataclass(frozen=True)
class CachedClip:
    """One clip's frozen-backbone states at the chosen layers, and its token labels."""

    encoder: torch.Tensor  # encoder positions x width: the whole window, as the extra block reads it
    decoder: torch.Tensor  # the clip's tokens x width (no padding)
    word: np.ndarray
    binary: np.ndarray
    scalar: np.ndarray

    @property
    def bytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.encoder, self.decoder))


class CachedDataset(Dataset):
    def __init__(self, entries: Sequence[CachedClip]):
        self.entries = list(entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, index: int) -> CachedClip:
        return self.entries[index]


class _CachedCollate:
    """Cached clips into a batch of states: the decoder states right-padded with zeros to the
    token length the features' batch would have had (causal attention hides the padding from
    the real tokens, and the labels there are -100), the encoder states stacked."""

    def __init__(self, token_bucket: int = 1, max_tokens: int | None = None):
        self.token_bucket, self.max_tokens = token_bucket, max_tokens

    def __call__(self, entries: list[CachedClip]) -> dict:
        length = bucketed(max(len(entry.decoder) for entry in entries), self.token_bucket, self.max_tokens)
        first = entries[0].decoder
        decoder = first.new_zeros((len(entries), length, first.shape[-1]))
        for row, entry in enumerate(entries):
            decoder[row, : len(entry.decoder)] = entry.decoder
        items = [{"word": e.word, "binary": e.binary, "scalar": e.scalar} for e in entries]
        return {
            "decoder_states": decoder,
            "encoder_states": torch.stack([entry.encoder for entry in entries]),
            **token_fields(items, length),
        }


@dataclass
class StatesCache:
    """A run's cached states: its training clips', and its validation clips' (with those clips,
    so that predicting exactly them reads the cache)."""

    train: list[CachedClip]
    validation_clips: list[Clip]
    validation: list[CachedClip]

    @property
    def bytes(self) -> int:
        return sum(entry.bytes for entry in self.train + self.validation)


# --- the detector ---


class WhisperTokenDetector(NeuralDetector[WhisperTokenConfig, WhisperTokenModel]):
    kind = "whisper-tokens"
    config_class = WhisperTokenConfig

    def __init__(self, backbone: str | None = None, checkpoint_dir: Path | None = None):
        super().__init__(backbone, checkpoint_dir)
        # the backbone's, and the tokenizer: set by build() (Any: transformers is not analysed)
        self.feature_extractor: Any = None
        self._tokenizer: WordTokenizer | None = None
        self.cache: StatesCache | None = None  # while fit trains from cached states

    @property
    def tokenizer(self) -> WordTokenizer:
        """The backbone's tokenizer, that build() loaded with the model."""
        if self._tokenizer is None:
            raise RuntimeError(NOT_BUILT)
        return self._tokenizer

    @tokenizer.setter
    def tokenizer(self, tokenizer: WordTokenizer) -> None:
        self._tokenizer = tokenizer

    def build(self, config: WhisperTokenConfig | None = None) -> WhisperTokenModel:
        """The frozen backbone with a fresh extra block and heads, on its device."""
        self.config = config or self.config
        set_seed(self.config.seed)
        parts = load_whisper(backbone_path(self.backbone, self.checkpoint_dir, family=self.family))
        self.feature_extractor = parts.feature_extractor
        self.tokenizer = WordTokenizer(parts.tokenizer, parts.model.config.max_target_positions)
        self.model = WhisperTokenModel(
            parts.model, hidden_layer=self.config.hidden_layer, extra_block_init=self.config.extra_block_init
        ).to(self.device)
        # DDP syncs the trainable part only (the backbone is frozen); a head whose loss weight is 0 gets no gradient
        one_head = not (self.config.binary_loss_weight and self.config.scalar_loss_weight)
        self.synced = distributed.wrap(self.model, device=self.device, find_unused_parameters=one_head)
        return self.model

    def _data_loader(self, dataset: Dataset, collate, *, training: bool, workers: int, pin: bool) -> DataLoader:
        """Training: shuffled (seeded; under torchrun this rank's share) batches of the physical
        batch size; prediction: in order. The same for features and for cached states, so that
        both give the same batches in the same order. `pin`: host batches for a CUDA device go
        through page-locked memory (an asynchronous copy)."""
        sampler = distributed.training_sampler(dataset, seed=self.config.seed) if training else None
        return DataLoader(
            dataset,
            batch_size=self.config.loader_batch if training else self.config.eval_batch_size,
            shuffle=training and sampler is None,
            sampler=sampler,
            collate_fn=collate,
            num_workers=workers,
            # Workers start again every epoch, as they always did: kept (persistent_workers),
            # DataLoader would stop drawing their seed from `generator` after the first epoch, and
            # the shuffles of a seed would depend on the number of workers (and differ from the
            # cached states' loader, which has none). With the cache, later epochs use no workers.
            generator=seeded_generator(self.config.seed),
            pin_memory=pin,
        )

    def _collate(self) -> "_Collate":
        return _Collate(
            self.tokenizer.pad_id, self.config.token_bucket, self.tokenizer.max_tokens, self.model.window_frames
        )

    def loader(self, clips: Sequence[Clip], *, training: bool) -> DataLoader:
        """Batches of log-mel features (cut to the clips) and tokens, made by config.num_workers
        worker processes."""
        collate = self._collate()
        dataset = TokenDataset(clips, self.feature_extractor, self.tokenizer)
        cuda = self.device.type == "cuda"
        return self._data_loader(dataset, collate, training=training, workers=self.config.num_workers, pin=cuda)

    def cached_loader(self, entries: Sequence[CachedClip], *, training: bool) -> DataLoader:
        """Batches of cached states, in the order `loader` gives the same clips' features. In
        this process (the states may be on the device already, and then are not pinned)."""
        collate = _CachedCollate(self.config.token_bucket, self.tokenizer.max_tokens)
        on_host = bool(entries) and entries[0].encoder.device.type == "cpu"
        pin = self.device.type == "cuda" and on_host
        return self._data_loader(CachedDataset(entries), collate, training=training, workers=0, pin=pin)

    def states_compute(
        self, clips: Sequence[Clip], place: str, progress: Progress | None = None, should_stop: StopCheck | None = None
    ) -> list[CachedClip]:
        """Each clip's frozen-backbone states, computed as a training step computes them (same
        precision; the backbone is always in eval mode), kept on the device or in host memory."""
        keep = self.device if place == "device" else torch.device("cpu")
        entries = []
        self.model.eval()
        with torch.no_grad():
            for batch in self.loader(clips, training=False):
                check_stop(should_stop)
                batch = to_device(batch, self.device)
                with autocast(self.device, self.precision):
                    decoder, encoder = self.model.chosen_hidden_states(
                        batch["input_features"], batch["decoder_input_ids"], batch["features_fill"]
                    )
                decoder, encoder = decoder.to(keep), encoder.to(keep)
                labels = {key: batch[key].cpu().numpy() for key in ("word", "binary", "scalar")}  # one copy a batch
                for row, count in enumerate(batch["tokens"].tolist()):
                    entries.append(
                        CachedClip(
                            encoder=encoder[row].clone(),
                            decoder=decoder[row, :count].clone(),
                            **{key: values[row, :count].copy() for key, values in labels.items()},
                        )
                    )
                if progress is not None:
                    progress("computing the frozen Whisper states once", len(entries), len(clips))
        return entries

    def feature_cache_place(self, clips: int, epoch_updates: int) -> tuple[str, str]:
        """Where config.feature_cache keeps a run's states, and why: "device", "host" or "off"."""
        setting, cuda = self.config.feature_cache, self.device.type == "cuda"
        max_steps = self.config.max_steps
        if setting in ("off", "host"):
            place, reason = setting, "as configured"
        elif setting == "device":
            place, reason = ("device" if cuda else "host"), "as configured"
        elif self.config.epochs == 1 or (max_steps is not None and max_steps <= epoch_updates):
            place, reason = "off", "auto: the run sees each clip once"
        else:
            need = clips * self.state_bytes_estimate()
            if cuda and need <= CACHE_MEMORY_SHARE * torch.cuda.mem_get_info(self.device)[0]:
                place, reason = "device", "auto: fits in the device's memory"
            elif need <= CACHE_MEMORY_SHARE * available_host_bytes():
                place, reason = "host", "auto: fits in host memory"
            else:
                place, reason = "off", f"auto: {need / 1e9:.1f} GB fits neither the device nor host memory"
        # every rank trains the same way (the smallest choice any rank could make)
        agreed = CACHE_PLACES[distributed.min_over_ranks(CACHE_PLACES.index(place), self.device)]
        return agreed, reason if agreed == place else "another rank could not hold it"

    def state_bytes_estimate(self) -> int:
        """Bytes one clip's cached states take: the encoder's positions and a generous transcript
        of decoder tokens, in float32 (what the backbone's hidden states are, under autocast too)."""
        config = self.model.backbone.config
        return (config.max_source_positions + ESTIMATED_TOKENS) * config.d_model * 4

    def _logits(self, model: nn.Module, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        if "decoder_states" in batch:
            return model(decoder_states=batch["decoder_states"], encoder_states=batch["encoder_states"])
        return model(batch["input_features"], batch["decoder_input_ids"], batch["features_fill"])

    def _loss(self, model: nn.Module, batch: dict) -> torch.Tensor:
        """The loss of each configured batch (config.batch_size clips) in `batch` (see
        batching.grouped_loss), from features or from cached states."""
        binary_logits, scalar_logits = self._logits(model, batch)

        def loss_of(rows: slice) -> torch.Tensor:
            return token_loss(
                binary_logits[rows],
                scalar_logits[rows],
                batch["binary"][rows],
                batch["scalar"][rows],
                class_weights=self.config.class_weights,
                binary_weight=self.config.binary_loss_weight,
                scalar_weight=self.config.scalar_loss_weight,
            )

        return grouped_loss(len(binary_logits), self.config.batch_size, loss_of)

    def trainable(self) -> nn.Module:
        return self.model.head_modules()  # the backbone is frozen

    def _probe_size(self, clip: Clip) -> int:
        return transcript_length(clip)

    def _probe_batch(self, clips: Sequence[Clip]) -> dict:
        """From their features (never the cache)."""
        dataset = TokenDataset(clips, self.feature_extractor, self.tokenizer)
        return self._collate()([dataset[index] for index in range(len(dataset))])

    def _clips(self, clips) -> list[Clip]:
        return list(clips)

    def _fit_batches(self, train, validation, loader, epoch_updates, progress, should_stop) -> DataLoader:
        """The cached states' batches where config.feature_cache keeps them, else `loader`'s."""
        self.cache = self._cache_build(train, validation, epoch_updates, progress, should_stop)
        return loader if self.cache is None else self.cached_loader(self.cache.train, training=True)

    def _fit_finished(self) -> None:
        self.cache = None  # the memory goes back; test clips are predicted from their features

    def _cache_build(self, train, validation, epoch_updates, progress, should_stop) -> StatesCache | None:
        """The run's cached states where config.feature_cache says (resolved in the config);
        what they hold and cost in runtime["feature_cache"] and the run's log."""
        place, reason = self.feature_cache_place(len(train) + len(validation), epoch_updates)
        self.config = replace(self.config, feature_cache=place)
        report = self.runtime["feature_cache"] = {
            "place": place,
            "reason": reason,
            "clips": 0,
            "bytes": 0,
            "seconds": 0,
        }
        if place == "off":
            if progress is not None:
                progress(f"feature cache off ({reason})", 0, 1)
            return None
        started = time.monotonic()
        cache = StatesCache(
            train=self.states_compute(train, place, progress, should_stop),
            validation_clips=validation,
            validation=self.states_compute(validation, place, progress, should_stop),
        )
        seconds = time.monotonic() - started
        report.update(clips=len(train) + len(validation), bytes=cache.bytes, seconds=round(seconds, 3))
        if progress is not None:
            where = "on the device" if place == "device" else "in host memory"
            progress(
                f"feature cache: {len(train) + len(validation)} clips' states, {cache.bytes / 1e9:.2f} GB "
                f"{where}, computed in {seconds:.1f} s ({reason})",
                1,
                1,
            )
        return cache

    def _prediction_batches(self, clips: list[Clip]) -> DataLoader:
        """From the cached states when predicting exactly the fit's validation clips."""
        if self.cache is not None and clips == self.cache.validation_clips:  # Clip compares by identity
            return self.cached_loader(distributed.share(self.cache.validation), training=False)
        return self.loader(distributed.share(clips), training=False)

    def _predict_share(self, clips, batches, progress, should_stop) -> list[ClipPrediction]:
        self.model.eval()
        predictions: list[ClipPrediction] = []
        for batch in batches:
            check_stop(should_stop)
            batch = to_device(batch, self.device)
            with autocast(self.device, self.precision):
                binary_logits, scalar_logits = self._logits(self.model, batch)
            probability = binary_logits.float().softmax(-1)[..., 1].cpu().numpy()
            scalar = torch.sigmoid(scalar_logits.float()).cpu().numpy()
            words = batch["word"].cpu().numpy()
            for row in range(len(words)):
                clip = clips[len(predictions)]
                binary, scores = tokens_to_words(
                    probability[row], scalar[row], words[row], len(clip.words), self.config.token_rule
                )
                predictions.append(ClipPrediction(clip.clip_id, binary, scores))
            if progress is not None:
                progress("predicting", len(predictions), len(clips))
        return predictions

    def _save_weights(self, directory: Path) -> None:
        """Only what was trained (the extra block and heads): the frozen backbone is named, and
        loaded again from the checkpoint folder."""
        state = {k: v.contiguous().cpu() for k, v in self.model.head_modules().state_dict().items()}
        save_file(state, str(directory / HEAD_FILE))

    def _restore(self, directory: Path, manifest: dict, config: WhisperTokenConfig) -> None:
        self.build(config)
        self.model.head_modules().load_state_dict(load_file(str(directory / HEAD_FILE)))
