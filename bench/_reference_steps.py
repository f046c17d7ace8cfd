"""The reference bench/train_throughput.py holds the project against: a plain Hugging Face training
step and inference pass of the same model as a user would write them, at a fixed input size, with
none of the project's code (transformers, torch, AdamW, autocast).

- Whisper (WhiStress): the frozen WhisperModel run with output_hidden_states, one more
  WhisperDecoderLayer on the decoder's and encoder's layer-9 states, an MLP head, cross-entropy;
  input: log-mel over Whisper's whole window, `tokens` decoder tokens;
- XLS-R (EmphaClass): Wav2Vec2Model fully fine-tuned with a linear head per frame, cross-entropy;
  input: `seconds` of audio.
"""

import time
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

AUTOCAST = {"bf16": torch.bfloat16, "fp16": torch.float16}


def reference_rates(
    kind: str, folder: Path, *, batch: int, eval_batch: int, seconds: float, tokens: int, device: str, steps: int
) -> dict:
    """{"train": clips/s, "inference": clips/s} of the plain step of `kind` saved in `folder`."""
    device = torch.device(device)
    precision = _precision(device)
    if kind == "whisper-tokens":
        model, trained, inputs = _whisper(folder, device, tokens)
    else:
        model, trained, inputs = _wav2vec2(folder, device, seconds)
    optimizer = torch.optim.AdamW([p for p in trained.parameters() if p.requires_grad], lr=1e-4)
    train_inputs, eval_inputs = inputs(batch), inputs(eval_batch)
    trained.train()

    def train_step():
        with _autocast(device, precision):
            loss = model(*train_inputs)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    def infer_step():
        with torch.no_grad(), _autocast(device, precision):
            model(*eval_inputs, loss=False)

    train = batch * steps / _seconds(train_step, steps, device)
    trained.eval()
    inference = eval_batch * steps / _seconds(infer_step, steps, device)
    return {"train": train, "inference": inference}


def _precision(device: torch.device) -> str:
    if device.type != "cuda":
        return "fp32"
    return "bf16" if torch.cuda.is_bf16_supported() else "fp16"


def _autocast(device: torch.device, precision: str):
    if precision == "fp32":
        return torch.autocast(device.type, enabled=False)
    return torch.autocast(device.type, dtype=AUTOCAST[precision])


def _seconds(step, steps: int, device: torch.device) -> float:
    step()  # warm-up: kernels, allocator, optimizer state
    _synchronize(device)
    started = time.perf_counter()
    for _ in range(steps):
        step()
    _synchronize(device)
    return time.perf_counter() - started


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _whisper(folder: Path, device: torch.device, tokens: int):
    from transformers import WhisperModel
    from transformers.models.whisper.modeling_whisper import WhisperDecoderLayer

    backbone = WhisperModel.from_pretrained(folder).to(device).eval().requires_grad_(False)
    config = backbone.config
    layer = min(9, config.decoder_layers, config.encoder_layers)
    block = WhisperDecoderLayer(config, layer_idx=config.decoder_layers).to(device)
    head = nn.Sequential(nn.Linear(config.d_model, 2 * config.d_model), nn.ReLU(), nn.Linear(2 * config.d_model, 2))
    trained = nn.ModuleDict({"block": block, "head": head.to(device)})
    frames = config.max_source_positions * 2  # the whole window of log-mel frames

    class Step(nn.Module):
        def forward(self, features, ids, labels, loss=True):
            with torch.no_grad():
                out = backbone(
                    input_features=features, decoder_input_ids=ids, output_hidden_states=True, use_cache=False
                )
            states = block(out.decoder_hidden_states[layer], encoder_hidden_states=out.encoder_hidden_states[layer])
            logits = head(states)
            return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten()) if loss else logits

    def inputs(batch: int):
        features = torch.randn(batch, config.num_mel_bins, frames, device=device)
        ids = torch.randint(0, config.vocab_size, (batch, tokens), device=device)
        return features, ids, torch.randint(0, 2, (batch, tokens), device=device)

    return Step(), trained, inputs


def _wav2vec2(folder: Path, device: torch.device, seconds: float):
    from transformers import Wav2Vec2Model

    backbone = Wav2Vec2Model.from_pretrained(folder).to(device)
    head = nn.Linear(backbone.config.hidden_size, 2).to(device)
    trained = nn.ModuleDict({"backbone": backbone, "head": head})
    samples = round(seconds * 16000)
    frames = int(backbone._get_feat_extract_output_lengths(torch.tensor(samples)))

    class Step(nn.Module):
        def forward(self, audio, labels, loss=True):
            logits = head(backbone(audio).last_hidden_state)
            return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten()) if loss else logits

    def inputs(batch: int):
        return torch.randn(batch, samples, device=device), torch.randint(0, 2, (batch, frames), device=device)

    return Step(), trained, inputs
