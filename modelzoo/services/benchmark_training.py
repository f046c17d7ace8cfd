"""Benchmark runs, the GPU worker's side: write the label set where run_benchmark reads it, train
and test, store the outputs. This module imports modelzoo.training (and, through the detectors,
torch): only modelzoo.tasks imports it, inside the task's body, never a web process.

The run goes through annotation.shared.jobs: the claim (queued -> running) takes it once, the progress
writer is its heartbeat, and the runner stores the returned fields with the status only while
this attempt still holds the run. The outputs are stored just before that, after one more
progress write that raises JobLost if the run was taken away (re-queued as stale while this
worker was only slow), so a run never gets two results.
"""

import secrets
import socket
import tempfile
import time
from pathlib import Path

from celery import current_task
from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from annotation.shared.jobs import JobFailed, JobLost, job_run
from evaluation.models import DatasetExport, LabelSet
from evaluation.reports.zip_archive import zip_folder
from evaluation.services.dataset_export_files import label_set_files_write
from modelzoo.models import BenchmarkRun
from modelzoo.results import predictions_csv
from modelzoo.services.benchmark_devices import benchmark_train_on_devices
from modelzoo.services.benchmark_runs import benchmark_run_log
from modelzoo.training.alignment import AlignmentFailed, WordTimesMissing
from modelzoo.training.benchmark import run_benchmark
from modelzoo.training.checkpoints import CheckpointMissing
from modelzoo.training.detectors.base import Cancelled

Status = BenchmarkRun.Status
STOP_CHECK_SECONDS = 2.0  # how often the stop check asks the database (it is called at every step)
DETAIL_KEYS = ("backbone", "config", "runtime", "clips", "test_languages", "history", "seconds")


def benchmark_run_train(*, run_id: int) -> None:
    job_run(model=BenchmarkRun, job_id=run_id, work=_train)


def _train(run: BenchmarkRun, progress) -> dict:
    log = RunLog(run.pk, run.attempts)
    log(f"attempt {run.attempts} started on {worker_name()}")
    try:
        fields = _train_and_store(run, LoggedProgress(progress, log), StopCheck(run.pk, run.attempts))
    except JobLost:
        raise  # the run is another worker's now: write nothing, not even to its log
    except JobFailed as failed:
        log(f"failed: {failed.message}")
        raise
    except Exception as error:
        log(f"crashed: {error!r}")
        raise
    pooled = fields["metrics"]["pooled"]
    log("finished: " + ", ".join(f"{m} {_number(pooled[m]['value'])}" for m in run.measures))
    return fields


def _train_and_store(run: BenchmarkRun, progress, should_stop) -> dict:
    if should_stop():
        raise JobFailed(BenchmarkRun.CANCELLED)  # cancelled while it waited to be run again
    with tempfile.TemporaryDirectory(prefix=f"benchmark-{run.pk}-") as scratch_name:
        scratch = Path(scratch_name)
        folder = label_set_folder_write(run.label_set, scratch / "set", progress)
        test_folder = None
        if run.test_label_set is not None:
            test_folder = label_set_folder_write(
                run.test_label_set, scratch / "test-set", Prefixed(progress, "test set: ")
            )
        arguments = {
            "folder": folder,
            "detector": run.detector,
            "setting": run.setting,
            "checkpoint_dir": settings.MODELZOO_CHECKPOINT_DIR,
            "backbone": run.backbone or None,
            "config": run.config_overrides,
            "test_folder": test_folder,
            "output_dir": scratch / "model",
            "resamples": run.resamples,
            "seed": run.seed,
        }
        try:
            if run.devices > 1:  # data parallel: one process per device (modelzoo.services.benchmark_devices)
                result = benchmark_train_on_devices(
                    run=run, arguments=arguments, workdir=scratch / "ranks", progress=progress, should_stop=should_stop
                )
            else:
                ranked = run_benchmark(**arguments, progress=progress, should_stop=should_stop)
                if ranked is None:  # only a rank other than 0 of several returns none
                    raise JobFailed("the benchmark returned no result")
                result = ranked
        except Cancelled:
            raise JobFailed(BenchmarkRun.CANCELLED) from None
        except CheckpointMissing as error:
            raise JobFailed(f"{error} (MODELZOO_CHECKPOINT_DIR is {settings.MODELZOO_CHECKPOINT_DIR})") from None
        except (WordTimesMissing, AlignmentFailed, ValueError) as error:  # the setting or the set does not fit
            raise JobFailed(str(error)) from None
        progress("storing the results", 0, 1)  # JobLost here if this worker no longer holds the run
        stored = benchmark_outputs_store(run, result, scratch / "model", scratch, progress)
    details = {key: result[key] for key in DETAIL_KEYS}
    return {"metrics": result["metrics"], "details": details, **stored}


def label_set_folder_write(label_set: LabelSet, folder: Path, progress) -> Path:
    """The set as run_benchmark reads it, written by the exporters' own writers: the audiofolder
    export (16 kHz WAVs and per-split metadata.jsonl) with the JSONL export's clips.jsonl beside it
    (its rows carry every word's times). JobFailed if the rows no longer match the set's checksum."""
    if not label_set.is_final:
        raise JobFailed(f"{label_set} is not final; benchmarks run on final label sets")
    folder.mkdir(parents=True)
    for export_format in (DatasetExport.Format.AUDIOFOLDER, DatasetExport.Format.JSONL):
        label_set_files_write(export_format=export_format, label_set=label_set, folder=folder, progress=progress)
    return folder


def benchmark_outputs_store(run: BenchmarkRun, result: dict, model_dir: Path, scratch: Path, progress) -> dict:
    """The per-word predictions as CSV and the trained detector's folder as a zip, in the storage
    backend under a random folder (their links are signed; their paths are not guessable)."""
    folder, name = f"benchmarks/{secrets.token_hex(16)}", f"run-{run.pk}-{run.detector}"
    csv = ContentFile(predictions_csv(result["predictions"]).encode("utf-8"))
    predictions = default_storage.save(f"{folder}/{name}-predictions.csv", csv)
    archive = scratch / f"{name}-checkpoint.zip"
    zip_folder(model_dir, archive, progress=lambda done, total: progress("zipping the checkpoint", done, total))
    progress("storing the checkpoint", 0, 1)
    with archive.open("rb") as handle:
        checkpoint = default_storage.save(f"{folder}/{archive.name}", File(handle))
    return {
        "predictions": predictions,
        "predictions_count": len(result["predictions"]),
        "checkpoint": checkpoint,
        "checkpoint_size": archive.stat().st_size,
    }


class RunLog:
    """log(line): appends to the run's log while this attempt holds the run."""

    def __init__(self, run_id: int, attempt: int):
        self.run_id, self.attempt = run_id, attempt

    def __call__(self, line: str) -> None:
        benchmark_run_log(run_id=self.run_id, line=line, attempt=self.attempt)


class LoggedProgress:
    """progress(phase, done, total): the runner's progress writer (throttled; the heartbeat), and a
    log line at each new phase, e.g. "epoch 2/15: loss 0.4012, validation f1 0.613"."""

    def __init__(self, write, log: RunLog):
        self.write, self.log = write, log
        self.phase: str | None = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self.phase:
            self.phase = phase
            self.log(phase)
        self.write(phase, done, total)


class Prefixed:
    def __init__(self, progress, prefix: str):
        self.progress, self.prefix = progress, prefix

    def __call__(self, phase: str, done: int, total: int) -> None:
        self.progress(self.prefix + phase, done, total)


class StopCheck:
    """should_stop() for run_benchmark, asked between steps. At most every STOP_CHECK_SECONDS it
    refreshes the run's heartbeat (validation and prediction report no progress of their own) and
    reads the cancel flag; JobLost once this attempt no longer holds the run."""

    def __init__(self, run_id: int, attempt: int):
        self.run_id, self.attempt = run_id, attempt
        self.asked_at, self.cancel = float("-inf"), False

    def __call__(self) -> bool:
        if time.monotonic() - self.asked_at < STOP_CHECK_SECONDS:
            return self.cancel
        self.asked_at = time.monotonic()
        held = BenchmarkRun.objects.filter(pk=self.run_id, status=Status.RUNNING, attempts=self.attempt)
        if not held.update(heartbeat_at=timezone.now()):
            raise JobLost
        self.cancel = held.filter(cancel_requested=True).exists()
        return self.cancel


def worker_name() -> str:
    """The Celery worker's node name (gpu@box, or gpu1@box for a fleet's first worker), else the host's."""
    request = getattr(current_task, "request", None)
    return getattr(request, "hostname", None) or socket.gethostname()


def _number(value) -> str:
    return "undefined" if value is None else f"{value:.3f}"
