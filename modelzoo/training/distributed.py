"""Data-parallel training inside the processes torchrun (torch.distributed.run) starts: one per
device, each with RANK, LOCAL_RANK and WORLD_SIZE in its environment. Outside torchrun every
function here is the single-process identity, so the detectors call them unconditionally.

- training batches: a DistributedSampler gives each rank its share of every epoch's shuffle
  (re-seeded per epoch with set_epoch, so the ranks agree on the permutation);
- gradients: the model is wrapped in DistributedDataParallel, which averages them over the ranks;
- prediction: each rank predicts every WORLD_SIZE-th clip, and the shares are gathered back into
  the clips' order on every rank;
- decisions (scores, the best epoch): computed once on rank 0 and broadcast.

Backends: NCCL between GPUs, gloo on the CPU (tests, and machines without CUDA).
"""

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import NoReturn, TypeVar, cast

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import Dataset, DistributedSampler

# How long a rank waits in a collective for the others: a rank that died is noticed by torchrun
# (which then stops the rest) long before; this only bounds a hang nobody noticed.
COLLECTIVE_TIMEOUT = timedelta(minutes=30)
Answer = TypeVar("Answer")  # what decided_on_main's decide() returns


@dataclass(frozen=True)
class Ranks:
    world: int = 1
    rank: int = 0
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def ranks() -> Ranks:
    if not is_distributed():
        return Ranks()
    return Ranks(dist.get_world_size(), dist.get_rank(), int(os.environ.get("LOCAL_RANK", "0")))


def is_main() -> bool:
    return ranks().main


def start(device: str) -> Ranks:
    """Join the process group torchrun set up (its environment says where), with NCCL when this
    run trains on CUDA and gloo otherwise. Without torchrun's environment: one process, no group."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1 or dist.is_initialized():
        return ranks()
    cuda = device != "cpu" and torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl" if cuda else "gloo", timeout=COLLECTIVE_TIMEOUT)
    return ranks()


def stop() -> None:
    """Leave the process group once every rank got here (the success path): a rank that tore the
    group down while rank 0 was still writing its files was seen to abort in gloo's teardown
    ("terminate called without an active exception")."""
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def exit_rank(code: int) -> NoReturn:
    """End a torchrun rank without the interpreter's teardown. After the group is destroyed,
    gloo's threads can still be joinable when C++ runs its static destructors at exit, which
    aborts the process ("terminate called without an active exception", exit -6): torchrun then
    reports a rank killed by a signal for a run that finished, and the worker queues it again.
    Everything the rank wrote is closed by then; only the output streams need flushing."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def training_sampler(dataset: Dataset, *, seed: int) -> DistributedSampler | None:
    """Under torchrun: each rank's share of a seeded shuffle (the last share padded by repeating
    clips, so every rank takes the same number of steps and no collective waits forever)."""
    if not is_distributed():
        return None
    return DistributedSampler(dataset, shuffle=True, seed=seed, drop_last=False)


def start_epoch(batches, epoch: int) -> None:
    """A new shuffle for the epoch, the same on every rank (DistributedSampler.set_epoch)."""
    sampler = getattr(batches, "sampler", None)
    if isinstance(sampler, DistributedSampler):
        sampler.set_epoch(epoch)


def wrap(model: nn.Module, *, device: torch.device, find_unused_parameters: bool) -> nn.Module:
    """The model in DistributedDataParallel under torchrun; the model itself otherwise.
    find_unused_parameters for models that leave some parameters out of some steps (wav2vec2's
    layerdrop skips whole layers at random, its masking embedding is used only when masking, a
    head with loss weight 0 gets no gradient): without it DDP waits for their gradients forever."""
    if not is_distributed():
        return model
    device_ids = [device.index] if device.type == "cuda" else None
    return nn.parallel.DistributedDataParallel(
        model, device_ids=device_ids, find_unused_parameters=find_unused_parameters
    )


def share(items: Sequence) -> list:
    """This rank's items: every WORLD_SIZE-th, from its rank on."""
    info = ranks()
    return list(items[info.rank :: info.world])


def gather_shares(mine: list, total: int) -> list:
    """Every rank's `share` results, in the order of the items they were computed from, on every rank."""
    info = ranks()
    if info.world == 1:
        return mine
    shares: list = [None] * info.world
    dist.all_gather_object(shares, mine)
    ordered: list = [None] * total
    for rank, part in enumerate(shares):
        ordered[rank :: info.world] = part
    return ordered


def decided_on_main(decide: Callable[[], Answer]) -> Answer:
    """decide() on rank 0 only, its answer on every rank."""
    if not is_distributed():
        return decide()
    answer: list[Answer | None] = [decide() if is_main() else None]
    dist.broadcast_object_list(answer, src=0)
    return cast(Answer, answer[0])  # every rank's slot now holds rank 0's answer


def mean_over_ranks(values: list[float]) -> float | None:
    """The mean of every rank's values (the epoch's training loss over the whole global batch)."""
    total, count = float(np.sum(values)) if values else 0.0, len(values)
    if is_distributed():
        on = "cuda" if dist.get_backend() == "nccl" else "cpu"  # NCCL reduces GPU tensors only
        summed = torch.tensor([total, count], dtype=torch.float64, device=on)
        dist.all_reduce(summed)
        total, count = float(summed[0]), int(summed[1])
    return total / count if count else None


def min_over_ranks(value: int, device: torch.device) -> int:
    """The smallest of every rank's `value` (a choice all ranks must share), on every rank."""
    if not is_distributed():
        return value
    on = device if dist.get_backend() == "nccl" else "cpu"  # NCCL reduces GPU tensors only
    smallest = torch.tensor([value], dtype=torch.int64, device=on)
    dist.all_reduce(smallest, op=dist.ReduceOp.MIN)
    return int(smallest.item())
