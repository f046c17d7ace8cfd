"""A tiny deterministic model trained k updates by modelzoo.training's own pieces (Trainer,
distributed.training_sampler / wrap / start_epoch), in one process or as a torchrun rank:

    python -m torch.distributed.run --standalone --nproc-per-node 2 tests/modelzoo/ddp_equality.py OUT

Rank 0 saves the weights and how many gradient exchanges DDP made to OUT (torch.save). Used by
tests/modelzoo/test_distributed.py, which compares them with one process over the same global batches.
"""

import sys

import torch
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from modelzoo.training import distributed
from modelzoo.training.config import TrainConfig
from modelzoo.training.loop import Trainer, set_seed, updates_per_epoch

SAMPLES, FEATURES, EPOCHS, SEED = 12, 3, 2, 7
PER_RANK_BATCH = 2


def data() -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(SAMPLES, FEATURES, generator=generator)
    return TensorDataset(x, torch.sin(x.sum(dim=1, keepdim=True)))


def model() -> nn.Module:
    set_seed(SEED)  # the same initial weights in every process
    return nn.Sequential(nn.Linear(FEATURES, 8), nn.Tanh(), nn.Linear(8, 1))  # no dropout: deterministic


def train(world: int) -> dict:
    """k updates with a global batch of PER_RANK_BATCH * 2 and gradient accumulation 2; `world`
    processes each take PER_RANK_BATCH * 2 / world clips of each global batch."""
    config = TrainConfig(
        epochs=EPOCHS,
        learning_rate=0.05,
        batch_size=PER_RANK_BATCH * 2 // world,
        gradient_accumulation=2,
        device="cpu",
        seed=SEED,
    )
    net, dataset = model(), data()
    sampler = distributed.training_sampler(dataset, seed=SEED) or DistributedSampler(
        dataset, num_replicas=1, rank=0, shuffle=True, seed=SEED
    )  # one process: the same seeded shuffle, whole
    loader = DataLoader(dataset, batch_size=config.batch_size, sampler=sampler)
    synced = distributed.wrap(net, device=torch.device("cpu"), find_unused_parameters=False)
    exchanges = [0]
    if synced is not net:

        def counting_hook(state, bucket):
            exchanges[0] += 1
            return allreduce_hook(state, bucket)

        synced.register_comm_hook(None, counting_hook)

    def loss_of(batch):
        return nn.functional.mse_loss(synced(batch["x"]), batch["y"])

    total = updates_per_epoch(len(loader), config) * EPOCHS
    trainer = Trainer(
        parameters=list(net.parameters()),
        loss_of=loss_of,
        config=config,
        device=torch.device("cpu"),
        total_updates=total,
        synced=synced,
    )
    for epoch in range(1, EPOCHS + 1):
        distributed.start_epoch(loader, epoch)
        for index, (x, y) in enumerate(loader, start=1):
            trainer.step({"x": x, "y": y}, last_of_epoch=index == len(loader))
    return {
        "state": {k: v.detach().clone() for k, v in net.state_dict().items()},
        "updates": trainer.updates,
        "batches": len(loader) * EPOCHS,
        "exchanges": exchanges[0],
    }


if __name__ == "__main__":
    ranks = distributed.start("cpu")
    trained = train(ranks.world)
    if ranks.main:
        torch.save(trained, sys.argv[1])
    distributed.stop()
