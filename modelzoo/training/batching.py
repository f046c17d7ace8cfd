"""How training and prediction batches are shaped, shared by both neural detectors:

- length buckets: a batch's length (samples, frames or tokens) is padded up to a whole number of
  buckets, so that an epoch has a few distinct input shapes instead of one per batch (GPU
  kernels, cuDNN plans and the caching allocator are then reused from step to step);
- micro-batches: a physical batch of several of the configured batches is scored as those
  batches (`micro_batches`), so that one large batch gives the update the accumulated small
  ones would (modelzoo.training.loop.Trainer);
- the physical batch "auto" chooses on CUDA: the largest multiple of batch_size dividing the
  effective batch whose worst-case training step fits in the device's memory (one probe step on
  the longest clips, gradients discarded, random state restored).

Why buckets and not sorting by length: see modelzoo/training/README.md ("Batch shapes").
"""

import math
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

import torch

from modelzoo.training import distributed
from modelzoo.training.config import TrainConfig

# The share of the device's memory a probed physical batch may take at its peak (the rest is
# headroom for fragmentation and for the clips the probe did not see).
DEVICE_MEMORY_SHARE = 0.85


def bucketed(length: int, bucket: int | None, cap: int | None = None) -> int:
    """`length` padded up to a whole number of `bucket`s (None or 1: unchanged), at most `cap`."""
    if bucket is not None and bucket > 1:
        length = math.ceil(length / bucket) * bucket
    return min(length, cap) if cap is not None else length


def micro_batches(rows: int, size: int) -> list[slice]:
    """The configured batches (of `size` rows) a physical batch of `rows` rows is made of, in order."""
    return [slice(start, min(start + size, rows)) for start in range(0, rows, size)]


def grouped_loss(rows: int, size: int, loss_of_rows: Callable[[slice], torch.Tensor]) -> torch.Tensor:
    """The loss of each configured batch within a physical batch, as a 1-D tensor: each is
    normalized over its own rows (their labelled frames or tokens), as when it was a batch alone."""
    return torch.stack([loss_of_rows(part) for part in micro_batches(rows, size)])


def available_host_bytes() -> int:
    """Memory the system can still give (Linux's MemAvailable: free memory plus reclaimable cache)."""
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    import os

    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


@contextmanager
def random_state_kept(device: torch.device):
    """Whatever runs inside leaves torch's random generators (CPU and `device`) as it found them,
    so a probe step changes nothing in the run that follows."""
    cpu = torch.get_rng_state()
    cuda = torch.cuda.get_rng_state(device) if device.type == "cuda" else None
    try:
        yield
    finally:
        torch.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state(cuda, device)


def physical_batch_choose(
    config: TrainConfig,
    device: torch.device,
    *,
    fits: Callable[[int], bool] | None,
) -> tuple[int, str]:
    """The physical batch to train with, and why. `fits(size)` runs one probe step of `size`
    clips (CUDA only: None elsewhere) and says whether it stayed within DEVICE_MEMORY_SHARE of
    the memory."""
    setting, batch = config.physical_batch, config.batch_size
    if isinstance(setting, int):
        return setting, "as configured"
    if setting == "off" or config.gradient_accumulation == 1:
        return batch, "as configured" if setting == "off" else "no gradient accumulation to merge"
    if device.type != "cuda" or fits is None:
        return batch, "auto: merged on CUDA devices only"
    chosen = batch
    for steps in range(config.gradient_accumulation, 1, -1):  # the fewest, largest batches first
        if config.gradient_accumulation % steps == 0 and fits(batch * steps):
            chosen = batch * steps
            break
    # every rank must run the same batches (DDP's collectives): the smallest any rank can take
    chosen = distributed.min_over_ranks(chosen, device)
    reason = "fits in memory" if chosen > batch else "a larger one does not fit in memory"
    return chosen, f"auto: {reason}"


def physical_batch_line(config: TrainConfig, reason: str) -> str:
    """What a run's log says of its batches, e.g. "batches: 24 clips at once, 1 to an update of
    24 (auto: fits in memory)"."""
    return (
        f"batches: {config.loader_batch} clips at once, {config.batches_per_update} to an update "
        f"of {config.effective_batch} ({reason})"
    )


def probe_fits(
    *,
    device: torch.device,
    parameters: Sequence[torch.nn.Parameter],
    step: Callable[[int], torch.Tensor],
) -> Callable[[int], bool]:
    """fits(size) for physical_batch_choose: `step(size)` builds the worst-case batch of `size`
    clips and returns its loss (forward under autocast, outside DDP); its backward runs here,
    the gradients are dropped, and the peak memory, plus the optimizer's two AdamW moments not
    yet allocated, is compared with the device's memory."""
    total = torch.cuda.get_device_properties(device).total_memory
    moments = 2 * sum(p.numel() * 4 for p in parameters)  # AdamW keeps two fp32 tensors a parameter

    def fits(size: int) -> bool:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        try:
            with random_state_kept(device):
                step(size).backward()
            torch.cuda.synchronize(device)
            peak = torch.cuda.max_memory_allocated(device)
        except torch.cuda.OutOfMemoryError:
            return False
        finally:
            for parameter in parameters:
                parameter.grad = None
            torch.cuda.empty_cache()
        return peak + moments <= DEVICE_MEMORY_SHARE * total

    return fits
