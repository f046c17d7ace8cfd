"""Benchmark runs through their services, tasks in-process: launch (one run per model, checked
first), the worker's side (the set written where run_benchmark reads it, outputs stored, the log),
a missing checkpoint, cancelling, and a run that lost its worker."""

import csv
import io
import zipfile
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.utils import timezone

from annotation.shared.jobs import stale_jobs_requeue
from evaluation.services.label_sets import label_set_create, label_set_default_parameters
from modelzoo.models import BenchmarkRun
from modelzoo.plans import Plan
from modelzoo.services import benchmark_training
from modelzoo.services.benchmark_runs import BenchmarkRefused, benchmark_run_cancel, benchmark_runs_launch
from modelzoo.training.benchmark import run_benchmark
from tests.audio_files import CorpusFolder
from tests.modelzoo.builders import tiny_label_set

pytestmark = pytest.mark.django_db
Status = BenchmarkRun.Status
pytest.importorskip("parselmouth")


@pytest.fixture
def label_set(corpus_folder):
    return tiny_label_set(corpus_folder)


def launch(capture, *, execute=True, **arguments) -> list[BenchmarkRun]:
    """Launch; with execute, the (eager) worker runs each run once its row is committed."""
    arguments = {
        "detector": "acoustic",
        "label_mode": "both",
        "plan": Plan("multilingual"),
        "resamples": 50,
        **arguments,
    }
    with capture(execute=execute):
        runs = benchmark_runs_launch(**arguments)
    return [BenchmarkRun.objects.get(pk=run.pk) for run in runs]


def test_a_cross_lingual_launch_queues_one_run_per_model_in_one_group(label_set, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as sent:
        runs = benchmark_runs_launch(
            label_set=label_set,
            detector="frame-classifier",
            label_mode="binary",
            plan=Plan("cross-lingual"),
            config={"epochs": 3},
        )

    assert [run.setting_label for run in runs] == [
        "cross-lingual de",
        "cross-lingual en",
        "monolingual de",
        "monolingual en",
    ]
    assert len({run.group for run in runs}) == 1 and len(sent) == 4  # each sent once the rows are committed
    assert all(run.status == Status.QUEUED for run in runs)
    assert runs[0].config_overrides == {"scalar_loss_weight": 0.0, "selection_measure": "f1", "epochs": 3}
    assert runs[0].measures == ("accuracy", "f1")


def test_what_a_worker_would_refuse_is_refused_at_launch(label_set):
    draft = label_set_create(
        name="draft",
        studies=list(label_set.studies.all()),
        enqueue=False,
        parameters=label_set_default_parameters(studies=list(label_set.studies.all())),
    )
    cases = [
        ({"label_set": draft}, "is a draft: benchmarks run on final"),
        ({"plan": Plan("cross-dataset")}, "a second label set to test on goes with the cross-dataset setting"),
        ({"plan": Plan("cross-dataset"), "test_label_set": label_set}, "a different label set"),
        ({"config": {"epochz": 1}}, "unknown settings for AcousticConfig: epochz"),
        ({"backbone": "xls-r-1b"}, "the acoustic baseline has no backbone"),
        ({"plan": Plan("monolingual", by="variety"), "label_set": draft}, "is a draft"),
    ]
    for given, message in cases:
        arguments = {
            "label_set": label_set,
            "detector": "acoustic",
            "label_mode": "binary",
            "plan": Plan("multilingual"),
            **given,
        }
        with pytest.raises(BenchmarkRefused, match=message):
            benchmark_runs_launch(**arguments)
    assert not BenchmarkRun.objects.exists()


def test_a_run_trains_tests_and_stores_its_outputs(label_set, django_capture_on_commit_callbacks):
    [run] = launch(django_capture_on_commit_callbacks, label_set=label_set)

    assert run.status == Status.SUCCEEDED, run.error
    assert (run.attempts, run.phase) == (1, "finished")
    pooled = run.metrics["pooled"]
    assert pooled["clips"] == 2 and set(run.metrics["by_language"]) == {"de", "en"}
    for measure in ("accuracy", "f1", "pearson"):
        assert set(pooled[measure]) - {"interval_undefined"} == {"value", "low", "high"}
    assert run.details["clips"] == {"train": 4, "validation": 2, "test": 2}
    assert run.details["config"]["c_grid"] and run.details["history"]

    predictions = list(csv.DictReader(io.StringIO(default_storage.open(run.predictions.name).read().decode())))
    assert len(predictions) == run.predictions_count == pooled["words"]
    assert {row["language"] for row in predictions} == {"de", "en"}
    with default_storage.open(run.checkpoint.name) as handle, zipfile.ZipFile(handle) as archive:
        assert {"detector.json", "linear_models.json"} <= set(archive.namelist())
    assert run.checkpoint_size == default_storage.size(run.checkpoint.name)
    assert run.predictions.name.startswith("benchmarks/") and "/run-" in run.predictions.name

    log = run.log.splitlines()
    assert "attempt 1 started on" in log[0]
    for phase in ("copying audio", "measuring prosody: training clips", "predicting", "zipping the checkpoint"):
        assert any(line.endswith(" " + phase) for line in log), phase
    assert "finished: accuracy" in log[-1]


def test_a_cross_dataset_run_tests_on_the_other_sets_test_clips(
    label_set, django_capture_on_commit_callbacks, tmp_path
):
    other = tiny_label_set(CorpusFolder(tmp_path / "other"), name="other", languages=("en",), per_language=8)

    [run] = launch(
        django_capture_on_commit_callbacks,
        label_set=label_set,
        test_label_set=other,
        plan=Plan("cross-dataset", language="en"),
    )

    assert run.status == Status.SUCCEEDED, run.error
    assert run.details["clips"] == {"train": 2, "validation": 1, "test": 2}  # en of this set; the other's test split
    with default_storage.open(run.predictions.name) as handle:
        assert {row["clip_id"][:8] for row in csv.DictReader(io.StringIO(handle.read().decode()))} == {"other-en"}
    assert any(line.endswith(" test set: copying audio") for line in run.log.splitlines())


def test_a_missing_backbone_fails_the_run_naming_where_it_was_looked_for(
    label_set, django_capture_on_commit_callbacks, settings, tmp_path
):
    pytest.importorskip("torch")
    settings.MODELZOO_CHECKPOINT_DIR = tmp_path / "checkpoints"

    [run] = launch(django_capture_on_commit_callbacks, label_set=label_set, detector="frame-classifier")

    assert run.status == Status.FAILED
    assert "backbone 'xls-r-1b' not found" in run.error
    assert str(tmp_path / "checkpoints" / "facebook" / "wav2vec2-xls-r-1b") in run.error
    assert f"MODELZOO_CHECKPOINT_DIR is {tmp_path / 'checkpoints'}" in run.error
    assert run.log.splitlines()[-1].endswith("failed: " + run.error)
    assert not run.predictions and not run.metrics


def test_a_queued_run_is_cancelled_at_once_and_no_worker_runs_it(label_set, django_capture_on_commit_callbacks):
    [run] = launch(django_capture_on_commit_callbacks, label_set=label_set, execute=False)

    run = benchmark_run_cancel(run=run)
    benchmark_training.benchmark_run_train(run_id=run.pk)  # its message arrives: the claim finds it taken

    run.refresh_from_db()
    assert run.cancelled and run.cancel_requested and run.attempts == 0
    assert run.log.endswith("cancel requested\n")
    with pytest.raises(BenchmarkRefused, match="has already ended"):
        benchmark_run_cancel(run=run)


def test_a_running_run_stops_at_its_next_step_when_cancelled(
    label_set, django_capture_on_commit_callbacks, monkeypatch
):
    def cancelled_while_running(**arguments):
        benchmark_run_cancel(run=BenchmarkRun.objects.get())  # the admin's button, while training runs
        return run_benchmark(**arguments)

    monkeypatch.setattr(benchmark_training, "run_benchmark", cancelled_while_running)
    monkeypatch.setattr(benchmark_training, "STOP_CHECK_SECONDS", 0)

    [run] = launch(django_capture_on_commit_callbacks, label_set=label_set)

    assert run.status == Status.FAILED and run.cancelled and run.error == "cancelled"
    assert "cancel requested" in run.log and run.log.endswith("failed: cancelled\n")
    assert not run.predictions and not run.checkpoint and run.metrics is None


def test_a_run_taken_away_from_a_slow_worker_gets_no_result_from_it(
    label_set, django_capture_on_commit_callbacks, monkeypatch
):
    def requeued_meanwhile(**arguments):
        result = run_benchmark(**arguments)
        # The worker was silent too long: a sweep queued the run again while it finished training.
        BenchmarkRun.objects.update(heartbeat_at=timezone.now() - BenchmarkRun.STALE_AFTER * 2)
        with django_capture_on_commit_callbacks(execute=False):
            assert stale_jobs_requeue(model=BenchmarkRun)["requeued"] == 1
        return result

    monkeypatch.setattr(benchmark_training, "run_benchmark", requeued_meanwhile)
    [run] = launch(django_capture_on_commit_callbacks, label_set=label_set, execute=False)

    benchmark_training.benchmark_run_train(run_id=run.pk)  # the first worker

    run.refresh_from_db()

    assert run.status == Status.QUEUED and run.attempts == 1  # waiting for its second attempt
    assert run.metrics is None and not run.predictions
    assert not default_storage.exists("benchmarks")  # nothing stored by the worker that lost it


def test_a_run_whose_worker_died_runs_again_once_and_keeps_both_attempts_in_its_log(
    label_set, django_capture_on_commit_callbacks
):
    [run] = launch(django_capture_on_commit_callbacks, label_set=label_set, execute=False)
    # The first worker claimed it, wrote some progress and was killed.
    BenchmarkRun.objects.filter(pk=run.pk).update(
        status=Status.RUNNING,
        attempts=1,
        phase="training: epoch 1/15",
        heartbeat_at=timezone.now() - BenchmarkRun.STALE_AFTER - timedelta(seconds=1),
        log="2025-01-01 00:00:00 attempt 1 started on gpu-1\n",
    )

    with django_capture_on_commit_callbacks(execute=True):
        assert stale_jobs_requeue(model=BenchmarkRun) == {"requeued": 1, "failed": 0, "resent": 0}

    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and run.attempts == 2
    assert [line.split(" started")[0][20:] for line in run.log.splitlines() if "started on" in line] == [
        "attempt 1",
        "attempt 2",
    ]
    assert len(default_storage.listdir("benchmarks")[0]) == 1  # one folder of outputs: one result


def test_benchmark_runs_are_given_up_for_lost_sooner_than_other_jobs():
    from annotation.models.background_job import BackgroundJob

    assert BenchmarkRun.STALE_AFTER == timedelta(seconds=90) < BackgroundJob.STALE_AFTER
