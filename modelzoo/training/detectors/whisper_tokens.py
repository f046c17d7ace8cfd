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
"""

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Self

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch import nn
from torch.utils.data import DataLoader, Dataset

from modelzoo.training import distributed
from modelzoo.training.checkpoints import backbone_path, load_whisper
from modelzoo.training.config import WhisperTokenConfig
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
from modelzoo.training.pooling import IGNORE, tokens_to_words

HEAD_FILE = "head.safetensors"


def mlp_head(width: int, outputs: int) -> nn.Sequential:
    """WhiStress's classifier: one hidden layer twice as wide, ReLU."""
    return nn.Sequential(nn.Linear(width, 2 * width), nn.ReLU(), nn.Linear(2 * width, outputs))


class WhisperTokenModel(nn.Module):
    def __init__(self, backbone: nn.Module, *, hidden_layer: int = 9, extra_block_init: str = "fresh"):
        super().__init__()
        from transformers.models.whisper.modeling_whisper import WhisperDecoderLayer

        config = backbone.config
        self.backbone = backbone.eval().requires_grad_(False)
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

    def chosen_hidden_states(self, input_features, decoder_input_ids) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            out = self.backbone(
                input_features=input_features,
                decoder_input_ids=decoder_input_ids,
                output_hidden_states=True,
                use_cache=False,
            )
        return out.decoder_hidden_states[self.decoder_layer], out.encoder_hidden_states[self.encoder_layer]

    def forward(
        self, input_features: torch.Tensor, decoder_input_ids: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(binary logits B x T x 2, scalar logits B x T) per decoder position."""
        decoder_states, encoder_states = self.chosen_hidden_states(input_features, decoder_input_ids)
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


class TokenDataset(Dataset):
    def __init__(self, clips: Sequence[Clip], feature_extractor, tokenizer: WordTokenizer):
        self.clips, self.feature_extractor, self.tokenizer = list(clips), feature_extractor, tokenizer

    def __len__(self) -> int:
        return len(self.clips)

    def __getitem__(self, index: int) -> dict:
        clip = self.clips[index]
        # clips longer than the extractor's window (30 s for real Whisper) are cut there
        features = self.feature_extractor(clip.audio, sampling_rate=SAMPLE_RATE, return_tensors="np").input_features[0]
        tokenized = self.tokenizer.encode([word.text for word in clip.words], clip.language)
        word = np.array(tokenized.word_of_token)
        binary = np.array([clip.words[w].binary if w >= 0 else IGNORE for w in word], dtype=np.int64)
        scalar = np.array([clip.words[w].scalar if w >= 0 else IGNORE for w in word], dtype=np.float32)
        return {"features": features, "ids": np.array(tokenized.ids), "word": word, "binary": binary, "scalar": scalar}


class _Collate:
    def __init__(self, pad_id: int):
        self.pad_id = pad_id

    def __call__(self, items: list[dict]) -> dict:
        # right padding: with causal attention no real token ever sees it
        length = max(len(item["ids"]) for item in items)

        def padded(key, value, dtype):
            out = torch.full((len(items), length), value, dtype=dtype)
            for row, item in enumerate(items):
                out[row, : len(item[key])] = torch.from_numpy(item[key]).to(dtype)
            return out

        return {
            "input_features": torch.from_numpy(np.stack([item["features"] for item in items])),
            "decoder_input_ids": padded("ids", self.pad_id, torch.long),
            "word": padded("word", -1, torch.long),
            "binary": padded("binary", IGNORE, torch.long),
            "scalar": padded("scalar", IGNORE, torch.float32),
        }


# --- the detector ---


class WhisperTokenDetector(Detector):
    kind = "whisper-tokens"
    config_class = WhisperTokenConfig
    needs_word_times = False

    def __init__(self, backbone: str = "whisper-small", checkpoint_dir: Path | None = None):
        self.backbone, self.checkpoint_dir = backbone, checkpoint_dir
        self.config = WhisperTokenConfig()
        self.model: WhisperTokenModel | None = None
        self.synced: nn.Module | None = None  # the model, in DistributedDataParallel under torchrun
        self.feature_extractor = self.tokenizer = None
        self.history: list[dict] = []

    @property
    def device(self) -> torch.device:
        return pick_device(self.config.device)

    def build(self, config: WhisperTokenConfig | None = None) -> WhisperTokenModel:
        """The frozen backbone with a fresh extra block and heads, on its device."""
        self.config = config or self.config
        set_seed(self.config.seed)
        parts = load_whisper(backbone_path(self.backbone, self.checkpoint_dir, family="whisper"))
        self.feature_extractor = parts.feature_extractor
        self.tokenizer = WordTokenizer(parts.tokenizer, parts.model.config.max_target_positions)
        self.model = WhisperTokenModel(
            parts.model, hidden_layer=self.config.hidden_layer, extra_block_init=self.config.extra_block_init
        ).to(self.device)
        # DDP syncs the trainable part only (the backbone is frozen); a head whose loss weight is 0 gets no gradient
        one_head = not (self.config.binary_loss_weight and self.config.scalar_loss_weight)
        self.synced = distributed.wrap(self.model, device=self.device, find_unused_parameters=one_head)
        return self.model

    def loader(self, clips: Sequence[Clip], *, training: bool) -> DataLoader:
        batch_size = self.config.batch_size if training else self.config.eval_batch_size
        dataset = TokenDataset(clips, self.feature_extractor, self.tokenizer)
        sampler = distributed.training_sampler(dataset, seed=self.config.seed) if training else None
        return DataLoader(
            dataset,
            batch_size=batch_size,
            shuffle=training and sampler is None,
            sampler=sampler,
            collate_fn=_Collate(self.tokenizer.pad_id),
            num_workers=self.config.num_workers,
            generator=seeded_generator(self.config.seed),
            pin_memory=self.device.type == "cuda",
        )

    def loss(self, batch: dict) -> torch.Tensor:
        binary_logits, scalar_logits = self.synced(batch["input_features"], batch["decoder_input_ids"])
        return token_loss(
            binary_logits,
            scalar_logits,
            batch["binary"],
            batch["scalar"],
            class_weights=self.config.class_weights,
            binary_weight=self.config.binary_loss_weight,
            scalar_weight=self.config.scalar_loss_weight,
        )

    def trainer(self, total_updates: int) -> Trainer:
        parameters = [p for p in self.model.head_modules().parameters() if p.requires_grad]
        return Trainer(
            parameters=parameters,
            loss_of=self.loss,
            config=self.config,
            device=self.device,
            total_updates=total_updates,
            synced=self.synced,
        )

    def fit(self, train, validation, config=None, progress=None, should_stop=None) -> Self:
        self.build(config)
        loader = self.loader(train, training=True)
        epochs_updates = updates_per_epoch(len(loader), self.config) * self.config.epochs
        total = min(epochs_updates, self.config.max_steps or epochs_updates)
        validation = list(validation)

        def validate() -> dict:
            rows = prediction_rows(validation, self.predict(validation, should_stop=should_stop))
            return distributed.decided_on_main(lambda: score(rows, resamples=0))

        self.history = train_epochs(
            trainer=self.trainer(total),
            trainable=self.model.head_modules(),
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
        clips = list(clips)
        mine = self._predict_share(distributed.share(clips), progress, should_stop)  # under torchrun, a share
        return distributed.gather_shares(mine, len(clips))

    def _predict_share(self, clips, progress, should_stop) -> list[ClipPrediction]:
        self.model.eval()
        predictions = []
        precision = choose_precision(self.config.precision, self.device)
        for batch in self.loader(clips, training=False):
            check_stop(should_stop)
            batch = to_device(batch, self.device)
            with autocast(self.device, precision):
                binary_logits, scalar_logits = self.model(batch["input_features"], batch["decoder_input_ids"])
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

    def save(self, directory: Path) -> None:
        """Only what was trained (the extra block and heads): the frozen backbone is named, and
        loaded again from the checkpoint folder."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        state = {k: v.contiguous().cpu() for k, v in self.model.head_modules().state_dict().items()}
        save_file(state, str(directory / HEAD_FILE))
        write_manifest(directory, kind=self.kind, config=self.config, backbone=self.backbone, history=self.history)

    @classmethod
    def load(cls, directory: Path, *, checkpoint_dir: Path | None = None) -> Self:
        directory = Path(directory)
        manifest = read_manifest(directory, cls.kind)
        detector = cls(manifest["backbone"], checkpoint_dir)
        detector.build(WhisperTokenConfig().with_overrides(manifest["config"]))
        detector.model.head_modules().load_state_dict(load_file(str(directory / HEAD_FILE)))
        detector.history = manifest.get("history", [])
        return detector
