"""End to end through a real Celery worker consuming the real `gpu` queue on Redis: the demo
corpus annotated through the real services and made a final label set -> a benchmark of each
detector launched from the admin (the two neural ones on tiny random backbones written with
save_pretrained into MODELZOO_CHECKPOINT_DIR) -> the worker trains, tests and stores -> the run
pages show accuracy, F1 and Pearson with their intervals; the acoustic baseline beats chance.

celery.contrib.testing runs a solo-pool worker in a thread of this process, consuming `gpu` only;
it shares the test database and media folder (transactional_db, so that it sees what the test
committed). tests/modelzoo/gpu_worker.py keeps this test's broker keys apart from any other's.
"""

import csv
import io
import threading

import pytest
from celery import signals
from celery.app.trace import reset_worker_optimizations
from celery.contrib.testing.worker import start_worker
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.db import connections
from django.urls import reverse

from config.celery import app as celery_app
from modelzoo.models import BenchmarkRun
from tests.annotation.test_import_job_worker import _stop_promptly, reads_never_block_the_worker  # noqa: F401
from tests.conftest import require_service
from tests.modelzoo.builders import demo_label_set
from tests.modelzoo.gpu_worker import BROKER_URL, app_on_isolated_broker, new_key_prefix, wait_for
from tests.modelzoo.helpers import TINY_WAV2VEC2, TINY_WHISPER

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
pytest.importorskip("torch")
pytest.importorskip("parselmouth")
TASK_NAME = "modelzoo.benchmark_run_train"
RUN_TIMEOUT_SECONDS = 300
# One quick epoch at a learning rate that moves tiny random models; CPU, as on this machine.
TINY_TRAINING = '{"epochs": 1, "learning_rate": 0.001, "warmup_ratio": 0.0, "gradient_accumulation": 1, "batch_size": 8, "device": "cpu"}'
LAUNCHES = [
    {"detector": "acoustic", "backbone": "", "config": "{}"},
    {"detector": "frame-classifier", "backbone": TINY_WAV2VEC2, "config": TINY_TRAINING},
    {"detector": "whisper-tokens", "backbone": TINY_WHISPER, "config": TINY_TRAINING},
]


@pytest.fixture
def gpu_worker(transactional_db):
    """A solo-pool worker thread consuming the `gpu` queue; yields the deliveries it ran."""
    require_service("Celery broker", BROKER_URL)
    deliveries = []

    def record_delivery(task=None, args=None, **kwargs):
        info = task.request.delivery_info or {}
        deliveries.append(
            {
                "task": task.name,
                "args": list(args or ()),
                "eager": bool(task.request.is_eager),
                "routing_key": info.get("routing_key"),
                "thread": threading.get_ident(),
            }
        )

    def close_worker_connections(**kwargs):
        connections.close_all()  # the worker thread's own connections

    def leave_logging_alone(**kwargs):
        """A setup_logging receiver stops the worker reconfiguring pytest's root logger."""

    signals.task_prerun.connect(record_delivery, weak=False)
    signals.task_postrun.connect(close_worker_connections, weak=False)
    signals.setup_logging.connect(leave_logging_alone, weak=False)
    try:
        with (
            app_on_isolated_broker(celery_app, new_key_prefix()),
            start_worker(
                celery_app, pool="solo", queues=["gpu"], perform_ping_check=False, shutdown_timeout=RUN_TIMEOUT_SECONDS
            ) as controller,
        ):
            try:
                yield deliveries
            finally:
                _stop_promptly(controller)
    finally:
        signals.task_prerun.disconnect(record_delivery)
        signals.task_postrun.disconnect(close_worker_connections)
        signals.setup_logging.disconnect(leave_logging_alone)
        reset_worker_optimizations(celery_app)


@pytest.fixture
def admin_browser(client):
    client.force_login(get_user_model().objects.create_superuser("boss", "boss@example.com", "a long password"))
    return client


@pytest.fixture
def demo_set(transactional_db):
    """Built before the worker starts: on SQLite's shared in-memory test database, two threads
    writing at once fail ("database table is locked") rather than wait, so the test thread only
    reads while the worker runs."""
    return demo_label_set()


@pytest.mark.usefixtures("reads_never_block_the_worker")
def test_each_detector_is_trained_and_scored_by_the_gpu_worker(
    demo_set, gpu_worker, admin_browser, checkpoint_dir, settings
):
    settings.MODELZOO_CHECKPOINT_DIR = checkpoint_dir  # the tiny backbones, saved with save_pretrained
    changelist = reverse("admin:evaluation_labelset_changelist")
    form_url = admin_browser.post(changelist, {"action": "launch_benchmark", "_selected_action": [demo_set.pk]})
    form_url = form_url["Location"]
    assert admin_browser.get(form_url).context["form"]["label_set"].value() == str(demo_set.pk)

    runs = []
    for launch in LAUNCHES:  # one at a time, for the same reason as demo_set's
        fields = {
            "label_set": demo_set.pk,
            "label_mode": "both",
            "setting": "multilingual",
            "by": "language",
            "resamples": 200,
            "seed": 0,
            **launch,
        }
        response = admin_browser.post(form_url, fields)
        assert response.status_code == 302, response.context["form"].errors
        run = BenchmarkRun.objects.latest("pk")
        run = wait_for(lambda run=run: _finished(run), timeout=RUN_TIMEOUT_SECONDS, what=f"run {run.pk} to finish")
        assert run.detector == launch["detector"] and run.status == BenchmarkRun.Status.SUCCEEDED, (run.error, run.log)
        assert run.attempts == 1 and run.predictions_count == run.metrics["pooled"]["words"] > 0
        _assert_page_shows_the_scores(admin_browser, run)
        runs.append(run)

    assert [(d["task"], d["args"], d["eager"], d["routing_key"]) for d in gpu_worker] == [
        (TASK_NAME, [run.pk], False, "gpu") for run in runs
    ]  # each run delivered once, through the broker, off the gpu queue
    assert all(d["thread"] != threading.get_ident() for d in gpu_worker)
    _assert_the_acoustic_baseline_beats_chance(runs[0])


def _finished(run: BenchmarkRun) -> BenchmarkRun | None:
    run.refresh_from_db()
    return run if run.finished else None


def _assert_page_shows_the_scores(client, run: BenchmarkRun) -> None:
    html = client.get(reverse("admin:modelzoo_benchmarkrun_change", args=[run.pk])).content.decode()
    for measure in ("accuracy", "f1", "pearson"):
        assert f"{measure} [95 %]" in html
        entry = run.metrics["pooled"][measure]
        if entry["value"] is not None:  # a tiny random model may predict one class: F1 undefined, and shown so
            assert f"{entry['value']:.3f} [{entry['low']:.3f}, {entry['high']:.3f}]" in html, measure
    progress = client.get(
        reverse("admin:modelzoo_benchmarkrun_progress", args=[run.pk]), headers={"HX-Request": "true"}
    )
    assert progress.status_code == 286


def _assert_the_acoustic_baseline_beats_chance(run: BenchmarkRun) -> None:
    """Chance is what a guesser blind to the audio gets: the majority class for accuracy, and for
    F1 marking every word (the best F1 of any label-blind guess, 2p / (1 + p) at base rate p)."""
    with default_storage.open(run.predictions.name) as handle:
        words = list(csv.DictReader(io.StringIO(handle.read().decode())))
    base_rate = sum(int(word["binary_true"]) for word in words) / len(words)
    pooled = run.metrics["pooled"]
    assert pooled["accuracy"]["low"] > 1 - base_rate, (pooled["accuracy"], base_rate)
    assert pooled["f1"]["low"] > 2 * base_rate / (1 + base_rate), (pooled["f1"], base_rate)
    assert pooled["pearson"]["low"] > 0, pooled["pearson"]
