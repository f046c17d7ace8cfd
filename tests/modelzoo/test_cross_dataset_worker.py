"""End to end through the real Celery worker on Redis: the demo set (annotated through the real
services) trains, and an EmphAssess-layout set imported with the command tests, as MMEE's Table
3 does (MMEE -> EmphAssess); the results say the test labels were prescribed by the script."""

import io
import threading

import pytest
from django.core.management import call_command

from evaluation.models import LabelSet
from modelzoo.models import BenchmarkRun
from modelzoo.plans import Plan
from modelzoo.selectors.benchmark_runs import run_results
from modelzoo.services.benchmark_runs import benchmark_runs_launch
from tests.annotation.test_import_job_worker import reads_never_block_the_worker  # noqa: F401
from tests.evaluation.dataset_layouts import demo_emphassess_folder
from tests.modelzoo.builders import demo_label_set
from tests.modelzoo.gpu_worker import wait_for
from tests.modelzoo.test_benchmark_worker import RUN_TIMEOUT_SECONDS, TASK_NAME, _finished, gpu_worker  # noqa: F401

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
pytest.importorskip("torch")
pytest.importorskip("parselmouth")
pytest.importorskip("pocketsphinx")  # EmphAssess gives no word times: the acoustic baseline aligns them


@pytest.fixture
def sets(transactional_db, tmp_path):
    """Both sets, made before the worker starts (the test thread only reads while it runs)."""
    demo = demo_label_set()
    gold, audio = demo_emphassess_folder(tmp_path / "emphassess")
    call_command(
        "import_emphasis_dataset", "emphassess", str(gold), "--audio", str(audio), "--name", "EmphAssess",
        "--splits", "test", stdout=io.StringIO(),
    )  # fmt: skip
    return demo, LabelSet.objects.get(name="EmphAssess")


@pytest.mark.usefixtures("reads_never_block_the_worker")
def test_trained_on_the_demo_set_tested_on_the_emphassess_layout_set_by_the_worker(sets, gpu_worker):  # noqa: F811
    demo, emphassess = sets

    [run] = benchmark_runs_launch(
        label_set=demo,
        test_label_set=emphassess,
        detector="acoustic",
        label_mode="binary",
        plan=Plan("cross-dataset", language="en", test_language="en"),
        resamples=200,
    )

    run = wait_for(lambda: _finished(run), timeout=RUN_TIMEOUT_SECONDS, what=f"run {run.pk} to finish")
    assert run.status == BenchmarkRun.Status.SUCCEEDED, (run.error, run.log)
    assert run.details["clips"]["test"] == 24 and run.details["test_languages"] == ["en"]
    assert run.predictions_count == run.metrics["pooled"]["words"] > 0
    assert set(run.metrics["pooled"]) >= {"accuracy", "f1"}
    assert any(line.endswith(" test set: copying audio") for line in run.log.splitlines())
    tested = run_results(run)["tested_against"]
    assert (tested["label_set"], tested["label_source"], tested["label_kind"]) == (
        "EmphAssess v1",
        "prescribed",
        "binary",
    )
    assert [(d["task"], d["args"], d["eager"], d["routing_key"]) for d in gpu_worker] == [
        (TASK_NAME, [run.pk], False, "gpu")
    ]  # delivered once, through the broker, off the gpu queue, to the worker's thread
    assert gpu_worker[0]["thread"] != threading.get_ident()
