"""A benchmark run on 2 devices, end to end through a real Celery worker on the real `gpu` queue
(Redis): launched from the admin's form with devices 2, the worker starts torchrun with 2 CPU
ranks (gloo) training the frame classifier (wav2vec2: DDP with find_unused_parameters). One rank
is killed mid-training (SIGKILL, as the out-of-memory killer would): the attempt fails once,
cleanly (every other rank of it stopped, none left running), the run is queued again, and the
second attempt trains on 2 ranks again and ends with one result.

The worker runs in a thread of this process (celery.contrib.testing, as
tests/modelzoo/test_benchmark_worker.py); its training processes are real processes.
"""

import os
import signal
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from modelzoo.models import BenchmarkRun
from tests.annotation.test_import_job_worker import reads_never_block_the_worker  # noqa: F401
from tests.modelzoo.gpu_worker import wait_for
from tests.modelzoo.helpers import TINY_WAV2VEC2
from tests.modelzoo.test_benchmark_worker import admin_browser, demo_set, gpu_worker  # noqa: F401

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
pytest.importorskip("torch")
Status = BenchmarkRun.Status
# Enough epochs that both ranks are still training when the test looks (a quiet machine ran two
# epochs, start to finish, in 10 s: the test never saw them train).
EPOCHS = 12
TRAINING = (
    f'{{"epochs": {EPOCHS}, "learning_rate": 0.001, "batch_size": 4, "gradient_accumulation": 2, "device": "cpu"}}'
)


def rank_processes(run: BenchmarkRun) -> dict[int, int]:
    """{rank: pid} of the run's training processes now running (found by their command line)."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes()
            if b"modelzoo.training.rank" not in command or f"benchmark-{run.pk}-".encode() not in command:
                continue
            environment = dict(
                item.split("=", 1)
                for item in (proc / "environ").read_bytes().decode(errors="replace").split("\0")
                if "=" in item
            )
        except (OSError, ValueError):
            continue
        if "RANK" in environment and b"torch.distributed.run" not in command and b"training.agent" not in command:
            found[int(environment["RANK"])] = int(proc.name)
    return found


@pytest.mark.usefixtures("reads_never_block_the_worker")
def test_a_two_device_run_survives_a_killed_rank_and_succeeds_on_its_next_attempt(request, checkpoint_dir, settings):
    # test_benchmark_worker's fixtures, in its order: the set is built before the worker starts
    label_set = request.getfixturevalue("demo_set")
    request.getfixturevalue("gpu_worker")
    browser = request.getfixturevalue("admin_browser")
    settings.MODELZOO_CHECKPOINT_DIR = checkpoint_dir
    fields = {
        "label_set": label_set.pk,
        "detector": "frame-classifier",
        "backbone": TINY_WAV2VEC2,
        "label_mode": "both",
        "setting": "multilingual",
        "by": "language",
        "config": TRAINING,
        "resamples": 100,
        "seed": 0,
        "devices": 2,
    }
    response = browser.post(reverse("admin:modelzoo_benchmarkrun_add"), fields)
    assert response.status_code == 302, response.context["form"].errors
    run = BenchmarkRun.objects.latest("pk")
    assert run.devices == 2

    ranks = wait_for(lambda: _training_on_two_ranks(run), timeout=180, what="both ranks training")
    os.kill(ranks[1], signal.SIGKILL)

    run = wait_for(lambda: _finished(run), timeout=300, what="the run's second attempt to finish")
    assert run.status == Status.SUCCEEDED, (run.error, run.log)
    assert run.attempts == 2 and run.predictions_count == run.metrics["pooled"]["words"] > 0
    assert "attempt 1 failed: a training process died (rank 1: signal 9 (SIGKILL))" in run.log, run.log
    assert "starting 2 training processes" in run.log.split("attempt 2 started")[1]  # data parallel again
    assert rank_processes(run) == {}  # neither attempt left a training process behind
    [outputs], _ = default_storage.listdir("benchmarks")  # one result
    assert sorted(default_storage.listdir(f"benchmarks/{outputs}")[1]) == [
        f"run-{run.pk}-frame-classifier-checkpoint.zip",
        f"run-{run.pk}-frame-classifier-predictions.csv",
    ]
    history = run.details["history"]
    assert [epoch["epoch"] for epoch in history] == list(range(1, EPOCHS + 1))
    assert sum(epoch["best"] for epoch in history) == 1


def _training_on_two_ranks(run: BenchmarkRun) -> dict[int, int] | None:
    run.refresh_from_db()
    if run.finished:
        pytest.fail(f"the run ended ({run.status}) before a rank could be killed: train it longer")
    if run.phase.startswith("training: epoch") and run.attempts == 1:
        ranks = rank_processes(run)
        return ranks if set(ranks) == {0, 1} else None
    return None


def _finished(run: BenchmarkRun) -> BenchmarkRun | None:
    run.refresh_from_db()
    return run if run.finished else None
