"""A fleet of GPU workers on the one `gpu` queue: two real `celery worker -Q gpu` processes (as
docker/compose.yaml scales the gpu-worker service) take different runs at once, and no run is
trained twice, though every run's message is delivered twice: the claim (annotation.shared.jobs) lets
one delivery through. PostgreSQL only, as tests/modelzoo/test_benchmark_worker_killed.py."""

import pytest

from config.celery import app as celery_app
from modelzoo.models import BenchmarkRun
from modelzoo.plans import Plan
from modelzoo.services.benchmark_runs import benchmark_runs_launch
from tests.modelzoo.builders import demo_label_set
from tests.modelzoo.gpu_worker import wait_for
from tests.modelzoo.helpers import TINY_WHISPER
from tests.modelzoo.test_benchmark_worker_killed import TRAINING, workers  # noqa: F401

pytestmark = [pytest.mark.worker, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
pytest.importorskip("torch")
Status = BenchmarkRun.Status


def test_two_gpu_workers_take_different_runs_and_train_none_twice(request):
    fleet = request.getfixturevalue("workers")
    names = ("gpu1", "gpu2")
    for name in names:
        fleet.start(name)
    for name in names:  # both consuming before anything is queued
        wait_for(lambda name=name: " ready." in fleet.log(name), timeout=120, what=f"worker {name} to be ready")

    label_set = demo_label_set()
    runs = [
        run
        for seed in (0, 1)
        for run in benchmark_runs_launch(
            label_set=label_set,
            detector="whisper-tokens",
            backbone=TINY_WHISPER,
            label_mode="binary",
            plan=Plan("multilingual"),
            config=TRAINING,
            resamples=50,
            seed=seed,
        )
    ]
    for run in runs:  # a second delivery of each (a redelivered message, a sweep's resend)
        celery_app.tasks[BenchmarkRun.TASK_NAME].apply_async(args=[run.pk])

    both_running = wait_for(lambda: _running_at_once(runs), timeout=180, what="both runs training at once")
    finished = [wait_for(lambda run=run: _finished(run), timeout=300, what=f"run {run.pk} to finish") for run in runs]

    for run in finished:
        assert run.status == Status.SUCCEEDED and run.attempts == 1, (run.error, run.log)  # trained once
        assert sum(" started on " in line for line in run.log.splitlines()) == 1
    takers = {_taker(run) for run in finished}
    assert takers == {f"{name}@" for name in names}, [run.log for run in finished]  # one run each
    assert both_running
    for name in names:  # each worker ran its own run's delivery and refused (did nothing with) the other's
        assert fleet.log(name).count("modelzoo.benchmark_run_train[") >= 2


def _running_at_once(runs) -> bool:
    return all(BenchmarkRun.objects.get(pk=run.pk).status == Status.RUNNING for run in runs)


def _finished(run: BenchmarkRun) -> BenchmarkRun | None:
    run.refresh_from_db()
    return run if run.finished else None


def _taker(run: BenchmarkRun) -> str:
    line = next(line for line in run.log.splitlines() if " started on " in line)
    return line.split(" started on ")[1].split("@")[0] + "@"
