"""Benchmark runs through the REST API (tasks in-process): launched, polled, cancelled, their
results and downloads; 401 without a sign-in, 403 without the permission; in the schema."""

import pytest

from modelzoo.models import BenchmarkRun
from tests.annotation.factories import ParticipantFactory, StudyFactory
from tests.api.callers import participant_client, staff_with, token_client
from tests.modelzoo.builders import tiny_label_set

pytestmark = pytest.mark.django_db
pytest.importorskip("parselmouth")
RUNS = "/api/v1/benchmark-runs/"
PERMS = (
    "modelzoo.add_benchmarkrun",
    "modelzoo.view_benchmarkrun",
    "modelzoo.change_benchmarkrun",
    "evaluation.view_labelset",
)


@pytest.fixture
def label_set(corpus_folder):
    return tiny_label_set(corpus_folder)


@pytest.fixture
def api():
    return token_client(staff_with(*PERMS))


def body(label_set, **fields) -> dict:
    return {
        "label_set": label_set.pk,
        "detector": "acoustic",
        "label_mode": "both",
        "setting": {"kind": "multilingual"},
        "resamples": 50,
        **fields,
    }


def launch(api, capture, payload, *, execute=True):
    with capture(execute=execute):
        response = api.post(RUNS, payload, format="json")
    assert response.status_code == 202, response.content
    return response


def test_a_run_is_launched_polled_and_read_with_its_downloads(api, label_set, django_capture_on_commit_callbacks):
    response = launch(api, django_capture_on_commit_callbacks, body(label_set, config={"c_grid": [1.0]}))

    launched = response.json()
    [run] = launched["runs"]
    assert response["Location"].endswith(f"{RUNS}?group={launched['group']}")
    assert [r["id"] for r in api.get(response["Location"]).json()["results"]] == [run["id"]]
    polled = api.get(run["url"]).json()
    assert polled["status"] == "succeeded", polled["error"]
    assert polled["setting_label"] == "multilingual" and "attempt 1 started on" in polled["log"]
    results = api.get(polled["results_url"]).json()
    assert results["measures"] == ["accuracy", "f1", "pearson"]
    assert set(results["metrics"]["pooled"]["f1"]) - {"interval_undefined"} == {"value", "low", "high"}
    assert results["details"]["config"]["c_grid"] == [1.0] and results["human_agreement"]
    assert results["expires_in"] > 0
    metrics_csv = api.get(f"{RUNS}{run['id']}/metrics-csv/")
    assert metrics_csv.status_code == 200 and metrics_csv["Content-Type"].startswith("text/csv")
    assert "f1" in metrics_csv.content.decode() and "pooled" in metrics_csv.content.decode()
    from django.test import Client

    predictions = Client().get(results["predictions_url"].removeprefix("http://testserver"))  # no token needed
    assert predictions.status_code == 200
    assert b"".join(predictions.streaming_content).startswith(b"clip_id,language,variety,word_index,word")


def test_a_cross_lingual_launch_answers_every_run_of_its_group(api, label_set, django_capture_on_commit_callbacks):
    response = launch(
        api,
        django_capture_on_commit_callbacks,
        body(label_set, label_mode="binary", setting={"kind": "cross-lingual", "languages": ["en"]}),
        execute=False,
    )

    runs = response.json()["runs"]
    assert [run["setting_label"] for run in runs] == ["cross-lingual en", "monolingual en"]
    assert {run["group"] for run in runs} == {response.json()["group"]} and runs[0]["status"] == "queued"


def test_refusals_say_why(api, label_set):
    cases = [
        (body(label_set, setting={"kind": "cross-dataset"}), "a second label set to test on"),
        (body(label_set, config={"epochz": 1}), "unknown settings for AcousticConfig: epochz"),
        (body(label_set, setting={"kind": "data-scale", "percents": [0]}), "percents"),
        (body(label_set, setting={"kind": "cross-arousal", "train_arousal": "high"}), "both train_arousal"),
        (body(label_set, detector="svm"), "detector"),
    ]
    for payload, message in cases:
        response = api.post(RUNS, payload, format="json")
        assert response.status_code == 400, response.content
        assert message in response.content.decode()
    assert not BenchmarkRun.objects.exists()


def test_a_run_is_cancelled_once_and_has_no_results(api, label_set, django_capture_on_commit_callbacks):
    [run] = launch(api, django_capture_on_commit_callbacks, body(label_set), execute=False).json()["runs"]

    cancelled = api.post(f"{RUNS}{run['id']}/cancel/")
    again = api.post(f"{RUNS}{run['id']}/cancel/")
    results = api.get(run["results_url"])

    assert cancelled.status_code == 200 and cancelled.json()["cancelled"] is True
    assert cancelled.json()["status"] == "failed" and cancelled.json()["error"] == "cancelled"
    assert again.status_code == 400 and "has already ended" in again.json()["detail"]
    # Not ready, as every download answers it: 409; a run that ended has no Retry-After.
    assert results.status_code == 409 and "Retry-After" not in results
    assert results.json() == {"detail": f"Run {run['id']}'s results (cancelled) failed: cancelled"}


ENDPOINTS = [
    ("get", RUNS, ("modelzoo.view_benchmarkrun",)),
    ("post", RUNS, ("modelzoo.add_benchmarkrun", "evaluation.view_labelset")),
    ("get", RUNS + "{run}/", ("modelzoo.view_benchmarkrun",)),
    ("post", RUNS + "{run}/cancel/", ("modelzoo.change_benchmarkrun",)),
    ("get", RUNS + "{run}/results/", ("modelzoo.view_benchmarkrun",)),
    ("get", RUNS + "{run}/metrics-csv/", ("modelzoo.view_benchmarkrun",)),
]


@pytest.fixture
def queued_run(label_set, django_capture_on_commit_callbacks):
    from modelzoo.plans import Plan
    from modelzoo.services.benchmark_runs import benchmark_runs_launch

    with django_capture_on_commit_callbacks(execute=False):
        return benchmark_runs_launch(
            label_set=label_set, detector="acoustic", label_mode="binary", plan=Plan("multilingual")
        )[0]


def call(client, method, path, run, label_set):
    payload = body(label_set) if method == "post" else None
    return getattr(client, method)(path.format(run=run.pk), payload, format="json")


@pytest.mark.parametrize(("method", "path", "perms"), ENDPOINTS)
def test_anonymous_callers_and_participants_get_401(method, path, perms, queued_run, label_set):
    from rest_framework.test import APIClient

    participant = participant_client(ParticipantFactory(study=StudyFactory(slug="voices")))
    for client in (APIClient(), participant):
        response = call(client, method, path, queued_run, label_set)
        assert response.status_code == 401, response.content


def test_the_metrics_csv_of_a_run_not_finished_answers_409_with_retry_after(queued_run):
    response = token_client(staff_with("modelzoo.view_benchmarkrun")).get(f"{RUNS}{queued_run.pk}/metrics-csv/")

    assert response.status_code == 409 and response["Retry-After"] == "5"
    assert f"Run {queued_run.pk}'s metrics: not ready yet" in response.content.decode()


@pytest.mark.parametrize(("method", "path", "perms"), ENDPOINTS)
def test_staff_without_the_permission_get_403(method, path, perms, queued_run, label_set):
    callers = [staff_with()] + [staff_with(*(set(perms) - {missing})) for missing in perms]
    for user in callers:
        response = call(token_client(user), method, path, queued_run, label_set)
        assert response.status_code == 403, (user.get_all_permissions(), response.content)
    assert BenchmarkRun.objects.count() == 1 and not BenchmarkRun.objects.get().cancel_requested


@pytest.mark.parametrize(("method", "path", "perms"), ENDPOINTS)
def test_staff_with_the_permission_get_through(
    method, path, perms, queued_run, label_set, django_capture_on_commit_callbacks
):
    if path.endswith(("results/", "metrics-csv/")):  # results are those of a finished run
        from modelzoo.services.benchmark_training import benchmark_run_train

        benchmark_run_train(run_id=queued_run.pk)
    with django_capture_on_commit_callbacks(execute=False):
        response = call(token_client(staff_with(*perms)), method, path, queued_run, label_set)
    assert response.status_code in (200, 202), response.content


def test_the_endpoints_are_in_the_schema(client):
    schema = token_client(staff_with()).get("/api/schema/?format=json").json()

    for path in (
        "/api/v1/benchmark-runs/",
        "/api/v1/benchmark-runs/{id}/",
        "/api/v1/benchmark-runs/{id}/cancel/",
        "/api/v1/benchmark-runs/{id}/results/",
    ):
        assert path in schema["paths"], path
    launch_body = schema["components"]["schemas"]["BenchmarkLaunchRequest"]["properties"]
    assert {"label_set", "detector", "label_mode", "setting", "config", "test_label_set"} <= set(launch_body)
    assert schema["paths"]["/api/v1/benchmark-runs/"]["post"]["responses"]["202"]


def test_a_backbone_missing_from_the_checkpoint_folder_is_refused_at_launch(api, label_set, settings, tmp_path):
    settings.MODELZOO_CHECKPOINT_DIR = tmp_path / "checkpoints"  # the web side sees the folder, without the model
    (tmp_path / "checkpoints").mkdir()

    named = api.post(RUNS, body(label_set, detector="whisper-tokens", backbone="whisper-smal"), format="json")
    default = api.post(RUNS, body(label_set, detector="frame-classifier"), format="json")

    assert named.status_code == default.status_code == 400
    assert "backbone 'whisper-smal' not found" in named.json()["detail"]
    assert str(tmp_path / "checkpoints" / "whisper-smal") in named.json()["detail"]
    assert "backbone 'xls-r-1b' not found" in default.json()["detail"]
    assert not BenchmarkRun.objects.exists()
