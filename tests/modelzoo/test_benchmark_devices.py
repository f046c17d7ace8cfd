"""How many devices a benchmark run trains on: asked for on the launch form and through the API,
stored on the run, refused where it cannot be given (the acoustic baseline, 0, more than a machine
has), and checked again by the worker against its machine's GPUs."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.shared.jobs import JobFailed
from modelzoo.models import BenchmarkRun
from modelzoo.plans import Plan
from modelzoo.services.benchmark_devices import check_devices_here
from modelzoo.services.benchmark_runs import BenchmarkRefused, benchmark_runs_launch
from tests.api.callers import staff_with, token_client
from tests.modelzoo.builders import tiny_label_set
from tests.modelzoo.helpers import TINY_WHISPER

pytestmark = pytest.mark.django_db
RUNS = "/api/v1/benchmark-runs/"
PERMS = ("modelzoo.add_benchmarkrun", "modelzoo.view_benchmarkrun", "evaluation.view_labelset")


@pytest.fixture
def label_set(corpus_folder):
    return tiny_label_set(corpus_folder)


def test_the_api_launches_a_run_on_two_devices_and_refuses_what_cannot_be_given(label_set):
    api = token_client(staff_with(*PERMS))
    payload = {
        "label_set": label_set.pk,
        "detector": "whisper-tokens",
        "backbone": TINY_WHISPER,
        "label_mode": "binary",
        "setting": {"kind": "multilingual"},
        "devices": 2,
    }
    response = api.post(RUNS, payload, format="json")  # queued: no worker runs in this test
    assert response.status_code == 202, response.content
    [run] = response.json()["runs"]
    assert run["devices"] == 2 and BenchmarkRun.objects.get(pk=run["id"]).devices == 2
    assert api.get(run["url"]).json()["devices"] == 2
    acoustic = api.post(RUNS, {**payload, "detector": "acoustic", "backbone": ""}, format="json")
    assert acoustic.status_code == 400 and "acoustic baseline" in acoustic.content.decode()
    assert api.post(RUNS, {**payload, "devices": 0}, format="json").status_code == 400
    default = api.post(RUNS, {key: value for key, value in payload.items() if key != "devices"}, format="json")
    assert default.json()["runs"][0]["devices"] == 1


def test_the_launch_form_takes_devices(client, label_set):
    client.force_login(get_user_model().objects.create_superuser("boss", "boss@example.com", "a long password"))
    fields = {
        "label_set": label_set.pk,
        "detector": "whisper-tokens",
        "backbone": TINY_WHISPER,
        "label_mode": "binary",
        "setting": "multilingual",
        "by": "language",
        "config": "{}",
        "resamples": 50,
        "seed": 0,
        "devices": 4,
    }
    page = client.get(reverse("admin:modelzoo_benchmarkrun_add")).content.decode()
    assert 'name="devices"' in page
    assert client.post(reverse("admin:modelzoo_benchmarkrun_add"), fields).status_code == 302
    assert BenchmarkRun.objects.latest("pk").devices == 4
    with pytest.raises(BenchmarkRefused, match="between 1 and 64"):
        benchmark_runs_launch(
            label_set=label_set,
            detector="whisper-tokens",
            label_mode="binary",
            plan=Plan("multilingual"),
            backbone=TINY_WHISPER,
            devices=65,
        )


def test_the_worker_refuses_more_gpus_than_its_machine_has(monkeypatch):
    torch = pytest.importorskip("torch")
    check_devices_here(8, "cpu")  # CPU ranks: any number
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    check_devices_here(4, "auto")
    with pytest.raises(JobFailed, match="asks for 8 GPUs; this worker's machine has 4"):
        check_devices_here(8, "auto")
    with pytest.raises(JobFailed, match='"device": "cuda:1" cannot give'):
        check_devices_here(2, "cuda:1")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    with pytest.raises(JobFailed, match="this worker has none"):
        check_devices_here(2, "auto")
