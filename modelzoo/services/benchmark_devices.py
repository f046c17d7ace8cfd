"""A benchmark run on several devices, the GPU worker's side: modelzoo.training.launch starts one
training process per device with torchrun, and this module connects it to the job runner:

- progress: rank 0's progress lines go to the run's progress writer (the heartbeat), and its
  heartbeats to the stop check, which also reads the cancel flag; while rank 0 is silent the flag
  is still read, but the heartbeat is not refreshed, so a hung run goes stale and is taken back;
- cancel, or this attempt's claim gone (JobLost): every rank is stopped before this returns;
- a rank killed (the out-of-memory killer, a GPU lost): the attempt ends there, every other rank
  stopped, and the run is queued again (the next attempt starts afresh), up to MAX_ATTEMPTS;
- a rank that crashed on an error fails the run with that error, as one process would.

Like modelzoo.services.benchmark_training, only the Celery task imports it.
"""

from pathlib import Path

from django.utils import timezone

from annotation.shared.jobs import JobFailed, JobLost, job_enqueue
from modelzoo.models import BenchmarkRun
from modelzoo.services.benchmark_runs import benchmark_run_log
from modelzoo.training.launch import RanksFailed, launch_benchmark

Status = BenchmarkRun.Status


def benchmark_train_on_devices(*, run: BenchmarkRun, arguments: dict, workdir: Path, progress, should_stop) -> dict:
    """run_benchmark(**arguments) on run.devices ranks; rank 0's result."""
    benchmark = {key: str(value) if isinstance(value, Path) else value for key, value in arguments.items()}
    check_devices_here(run.devices, (run.config_overrides or {}).get("device", "auto"))
    progress(f"starting {run.devices} training processes", 0, run.devices)
    try:
        return launch_benchmark(
            benchmark=benchmark,
            devices=run.devices,
            workdir=workdir,
            progress=progress,
            heartbeat=should_stop,
            cancel_requested=CancelFlag(run),
        )
    except RanksFailed as failure:
        if failure.lost:
            queue_again(run, str(failure))
        raise


def check_devices_here(devices: int, device: str) -> None:
    """A run on GPUs needs that many on this worker's machine (on the CPU any number of ranks runs)."""
    if device == "cpu":
        return
    import torch  # the worker's process only counts the GPUs; the ranks use them

    visible = torch.cuda.device_count()
    if device.startswith("cuda:") or (device == "cuda" and not visible):
        raise JobFailed(f'the run asks for {devices} devices, which "device": "{device}" cannot give')
    if visible and visible < devices:
        raise JobFailed(f"the run asks for {devices} GPUs; this worker's machine has {visible}")
    if not visible and device == "auto":
        raise JobFailed(f'the run asks for {devices} GPUs; this worker has none (for CPU ranks: "device": "cpu")')


class CancelFlag:
    """cancel_requested() without touching the heartbeat; JobLost once this attempt lost the run."""

    def __init__(self, run: BenchmarkRun):
        self.held = BenchmarkRun.objects.filter(pk=run.pk, status=Status.RUNNING, attempts=run.attempts)

    def __call__(self) -> bool:
        flags = list(self.held.values_list("cancel_requested", flat=True))
        if not flags:
            raise JobLost
        return flags[0]


def queue_again(run: BenchmarkRun, reason: str) -> None:
    """This attempt ends: the run goes back to the queue (JobLost: the runner stores nothing), or
    fails once it has been started MAX_ATTEMPTS times."""
    if run.attempts >= BenchmarkRun.MAX_ATTEMPTS:
        raise JobFailed(f"{reason}; started {run.attempts} times, not tried again")
    benchmark_run_log(
        run_id=run.pk, attempt=run.attempts, line=f"attempt {run.attempts} failed: {reason}; queued again"
    )
    queued = BenchmarkRun.objects.filter(pk=run.pk, status=Status.RUNNING, attempts=run.attempts).update(
        status=Status.QUEUED, phase="queued again: a training process died", heartbeat_at=timezone.now()
    )
    if queued:
        job_enqueue(run)
    raise JobLost
