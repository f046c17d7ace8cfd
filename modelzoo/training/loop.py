"""The training loop both neural detectors share: AdamW with linear warmup and decay, gradient
accumulation, mixed precision (bf16 on CUDA, or fp16 with a gradient scaler where the GPU has no
bf16), fixed seeds, a validation pass after every epoch, and the state of the best epoch restored
at the end. Under torchrun (modelzoo.training.distributed) the same loop runs on every rank: DDP
averages the gradients, accumulation steps skip that exchange (no_sync), and the best epoch is
decided on rank 0 and told to the others."""

import math
import random
import time
from collections.abc import Callable, Iterable
from contextlib import nullcontext

import numpy as np
import torch
from torch import nn

from modelzoo.training import distributed
from modelzoo.training.config import TrainConfig
from modelzoo.training.detectors.base import Progress, StopCheck, check_stop
from modelzoo.training.metrics import selection_value


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # seeds every CUDA device too


def pick_device(name: str) -> torch.device:
    """ "auto": CUDA when available. Under torchrun "auto" and "cuda" mean this rank's own GPU."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and distributed.is_distributed():
        return torch.device("cuda", distributed.ranks().local_rank)
    return torch.device(name)


def supports_bf16(device: torch.device) -> bool:
    """Whether the GPU computes in bf16 natively (Ampere and later; not V100 or T4)."""
    return device.type == "cuda" and torch.cuda.is_bf16_supported(including_emulation=False)


def choose_precision(
    setting: str, device: torch.device, *, bf16_supported: Callable[[torch.device], bool] | None = None
) -> str:
    """ "bf16", "fp16" or "fp32" for config.precision on this device: "auto" gives bf16 on a GPU
    that has it, fp16 (with a gradient scaler) on one that has not, full precision on the CPU,
    where bf16 and fp16 matmuls are slow and imprecise. Any other setting is taken as it is."""
    if setting != "auto":
        return setting
    if device.type != "cuda":
        return "fp32"
    return "bf16" if (bf16_supported or supports_bf16)(device) else "fp16"


AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def autocast(device: torch.device, precision: str):
    """Autocast in the chosen precision (see choose_precision); nothing for fp32."""
    if precision in AUTOCAST_DTYPES:
        return torch.autocast(device.type, dtype=AUTOCAST_DTYPES[precision])
    return nullcontext()


def to_device(batch: dict, device: torch.device) -> dict:
    return {
        key: value.to(device, non_blocking=True) if torch.is_tensor(value) else value for key, value in batch.items()
    }


def seeded_generator(seed: int) -> torch.Generator:
    """For DataLoader shuffling: the same seed gives the same batches."""
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator


class Trainer:
    """One optimizer over the trainable parameters; `step` runs forward and backward on a batch
    and updates the weights once the effective batch (batch_size x gradient_accumulation clips)
    has been seen: every gradient_accumulation batches of batch_size, or fewer batches when the
    physical batch is larger (config.batches_per_update). `loss_of(batch)` gives the loss of each
    configured batch within the physical one (modelzoo.training.batching.grouped_loss; a plain
    scalar counts as one), and their sum over gradient_accumulation is what is differentiated:
    the same gradient, batch for batch, as accumulating them one by one, the last partial update
    of an epoch included. `synced` is the DDP wrapper `loss_of` runs through under torchrun: the
    batches between two updates skip its gradient exchange (no_sync), which happens once, at the
    update's backward pass. In fp16 the loss is scaled (torch.amp.GradScaler) and a step with
    overflowing gradients is skipped."""

    def __init__(
        self,
        *,
        parameters: list[nn.Parameter],
        loss_of: Callable[[dict], torch.Tensor],
        config: TrainConfig,
        device: torch.device,
        total_updates: int,
        synced: nn.Module | None = None,
    ):
        self.parameters, self.loss_of, self.config, self.device = parameters, loss_of, config, device
        self.synced = synced if isinstance(synced, nn.parallel.DistributedDataParallel) else None
        self.precision = choose_precision(config.precision, device)
        self.scaler = torch.amp.GradScaler(device.type, enabled=self.precision == "fp16")
        decay = [p for p in parameters if p.ndim >= 2]  # no weight decay on biases and norms
        no_decay = [p for p in parameters if p.ndim < 2]
        groups = [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
        self.optimizer = torch.optim.AdamW(groups, lr=config.learning_rate)
        warmup = math.ceil(config.warmup_ratio * total_updates)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, _warmup_then_decay(warmup, total_updates))
        self.batches_seen = 0
        self.updates = 0

    def step(self, batch: dict, *, last_of_epoch: bool = False) -> torch.Tensor:
        """Forward and backward on `batch` (and the update when it is due). Returns the loss of
        each configured batch in it, detached and left on the device: reading it here would make
        the host wait for the device at every step."""
        batch = to_device(batch, self.device)
        self.batches_seen += 1
        updating = self.batches_seen % self.config.batches_per_update == 0 or last_of_epoch
        with self._sync(updating):
            with autocast(self.device, self.precision):
                losses = self.loss_of(batch).reshape(-1)
            self.scaler.scale(losses.sum() / self.config.gradient_accumulation).backward()
        if updating:
            self.scaler.unscale_(self.optimizer)  # clipping sees the true gradients
            torch.nn.utils.clip_grad_norm_(self.parameters, self.config.max_grad_norm)
            scale = self.scaler.get_scale()
            self.scaler.step(self.optimizer)  # skipped when fp16 gradients overflowed ...
            self.scaler.update()
            if self.scaler.get_scale() >= scale:  # ... and then the scale shrinks: the schedule waits too
                self.scheduler.step()
            self.optimizer.zero_grad(set_to_none=True)
            self.batches_seen = 0
            self.updates += 1
        return losses.detach().float()

    def _sync(self, updating: bool):
        """DDP's gradient exchange only on the backward pass before an update."""
        return self.synced.no_sync() if self.synced is not None and not updating else nullcontext()


def _warmup_then_decay(warmup: int, total: int) -> Callable[[int], float]:
    def factor(update: int) -> float:
        if update < warmup:
            return (update + 1) / (warmup + 1)
        return max(0.0, (total - update) / max(1, total - warmup))

    return factor


def updates_per_epoch(batches: int, config: TrainConfig) -> int:
    """Updates in an epoch of `batches` training batches (of config.loader_batch clips)."""
    return math.ceil(batches / config.batches_per_update)


def train_epochs(
    *,
    trainer: Trainer,
    trainable: nn.Module,
    batches: Callable[[], Iterable[dict]],
    batch_count: int,
    validate: Callable[[], dict],
    config: TrainConfig,
    progress: Progress | None,
    should_stop: StopCheck | None,
) -> list[dict]:
    """Train for config.epochs (or until config.max_steps updates), validate after each epoch,
    and leave `trainable` in the state of the epoch with the best validation measure.
    Returns the history: one dict per epoch, with its seconds, and of them the training steps'
    (data loading included), the validation's and the copy of the best state's."""
    report = progress or (lambda phase, done, total: None)
    history, best_value, best_state, best_epoch = [], float("-inf"), None, 0
    for epoch in range(1, config.epochs + 1):
        trainable.train()
        started, losses = time.monotonic(), []
        epoch_batches = batches()
        distributed.start_epoch(epoch_batches, epoch)
        for index, batch in enumerate(epoch_batches, start=1):
            check_stop(should_stop)
            losses.append(trainer.step(batch, last_of_epoch=index == batch_count))
            report(f"training: epoch {epoch}/{config.epochs}", index, batch_count)
            if config.max_steps is not None and trainer.updates >= config.max_steps:
                break
        # the one wait for the device in an epoch's steps: its losses, read back together
        losses = torch.cat(losses).tolist() if losses else []
        stepped = time.monotonic()
        check_stop(should_stop)
        report(f"validating after epoch {epoch}/{config.epochs}", 0, 1)
        metrics = validate()  # the same on every rank: scored on rank 0, sent to the others
        validated = time.monotonic()
        value = selection_value(metrics, config.selection_measure)
        improved = best_state is None or value > best_value
        if improved:
            best_value, best_state, best_epoch = value, _copy_state(trainable), epoch
        finished = time.monotonic()
        record = {
            "epoch": epoch,
            "updates": trainer.updates,
            "loss": distributed.mean_over_ranks(losses),
            "validation": {name: metrics["pooled"][name]["value"] for name in ("accuracy", "f1", "pearson")},
            "seconds": round(finished - started, 3),
            "step_seconds": round(stepped - started, 3),
            "validation_seconds": round(validated - stepped, 3),
            "copy_seconds": round(finished - validated, 3),
        }
        history.append(record)
        report(_epoch_line(record, config), epoch, config.epochs)
        if config.max_steps is not None and trainer.updates >= config.max_steps:
            break
    trainable.load_state_dict(best_state)
    for record in history:
        record["best"] = record["epoch"] == best_epoch
    return history


def _epoch_line(record: dict, config: TrainConfig) -> str:
    value = record["validation"][config.selection_measure]
    shown = "undefined" if value is None else f"{value:.3f}"
    loss = "n/a" if record["loss"] is None else f"{record['loss']:.4f}"
    return f"epoch {record['epoch']}/{config.epochs}: loss {loss}, validation {config.selection_measure} {shown}"


def _copy_state(module: nn.Module) -> dict:
    """The module's weights, copied to the CPU (the GPU copy goes on training)."""
    return {name: tensor.detach().to("cpu", copy=True) for name, tensor in module.state_dict().items()}
