"""Benchmarks in the admin (tasks in-process): launched from a label set, followed and read on the
run's page, cancelled, compared side by side, a group's matrix and curve; and who may do what."""

import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from evaluation.models import LabelSet
from modelzoo.models import BenchmarkRun
from modelzoo.plans import Plan
from modelzoo.services.benchmark_runs import benchmark_runs_launch
from tests.api.callers import staff_with
from tests.modelzoo.builders import tiny_label_set

pytestmark = pytest.mark.django_db
pytest.importorskip("parselmouth")
LAUNCH_PERMS = ("modelzoo.add_benchmarkrun", "evaluation.view_labelset")
ADD = reverse("admin:modelzoo_benchmarkrun_add")


@pytest.fixture
def label_set(corpus_folder):
    return tiny_label_set(corpus_folder)


@pytest.fixture
def boss(client):
    client.force_login(get_user_model().objects.create_superuser("boss", "boss@example.com", "a long password"))
    return client


def browser(*perms) -> Client:
    client = Client()
    client.force_login(staff_with(*perms))
    return client


def form(label_set, **fields) -> dict:
    return {
        "label_set": label_set.pk,
        "detector": "acoustic",
        "label_mode": "both",
        "setting": "multilingual",
        "by": "language",
        "config": "{}",
        "resamples": 50,
        "seed": 0,
        **fields,
    }


def launched(capture, label_set, **arguments) -> list[BenchmarkRun]:
    arguments = {
        "detector": "acoustic",
        "label_mode": "both",
        "plan": Plan("multilingual"),
        "resamples": 50,
        **arguments,
    }
    with capture(execute=True):
        runs = benchmark_runs_launch(label_set=label_set, **arguments)
    return [BenchmarkRun.objects.get(pk=run.pk) for run in runs]


def test_a_label_set_launches_a_benchmark_and_its_page_shows_the_results(
    boss, label_set, django_capture_on_commit_callbacks
):
    changelist = reverse("admin:evaluation_labelset_changelist")
    picked = boss.post(changelist, {"action": "launch_benchmark", "_selected_action": [label_set.pk]})
    assert picked.status_code == 302 and picked["Location"] == f"{ADD}?label_set={label_set.pk}"
    page = boss.get(picked["Location"])
    assert page.status_code == 200 and page.context["form"]["label_set"].value() == str(label_set.pk)

    with django_capture_on_commit_callbacks(execute=True):
        response = boss.post(ADD, form(label_set, config='{"c_grid": [0.1, 1.0]}'))

    run = BenchmarkRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "admin:modelzoo_benchmarkrun_change", args=[run.pk]
    )
    assert run.status == BenchmarkRun.Status.SUCCEEDED, run.error
    assert run.config_overrides == {"c_grid": [0.1, 1.0]} and run.created_by.username == "boss"
    html = boss.get(response["Location"]).content.decode()
    pooled = run.metrics["pooled"]
    for measure in ("accuracy", "f1", "pearson"):
        entry = pooled[measure]
        if entry.get("interval_undefined"):  # the tiny set's few test clips
            assert f"{entry['value']:.3f}<sup>*</sup>" in html and f"no interval: {entry['interval_undefined']}" in html
        elif entry["value"] is not None:
            assert f"{entry['value']:.3f} [{entry['low']:.3f}, {entry['high']:.3f}]" in html
        assert f"{measure} [95 %]" in html
    assert "Human agreement on the same label set" in html and "Predictions CSV" in html
    assert "attempt 1 started on" in html  # the log


def test_the_launch_form_says_what_is_wrong(boss, label_set):
    bad_json = boss.post(ADD, form(label_set, config="{not json"))
    unknown = boss.post(ADD, form(label_set, config='{"epochz": 2}'))
    percents = boss.post(ADD, form(label_set, setting="data-scale", percents="10, lots"))
    too_deep = boss.post(ADD, form(label_set, config="[" * 50000 + "]" * 50000))

    assert "Enter a valid JSON" in bad_json.content.decode()
    assert too_deep.status_code == 200 and "it is nested too deeply" in too_deep.content.decode()
    assert "unknown settings for AcousticConfig: epochz" in unknown.content.decode()
    assert "&#x27;lots&#x27; is not a whole percentage" in percents.content.decode()
    assert not BenchmarkRun.objects.exists()


def test_a_launch_of_several_models_opens_their_group_page_with_the_matrix(
    boss, label_set, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = boss.post(ADD, form(label_set, setting="cross-lingual", with_diagonal="on"))

    runs = list(BenchmarkRun.objects.order_by("pk"))
    assert len(runs) == 4 and all(run.status == BenchmarkRun.Status.SUCCEEDED for run in runs)
    assert response["Location"] == reverse("admin:modelzoo_benchmarkrun_group", args=[runs[0].group])
    html = boss.get(response["Location"]).content.decode()
    assert html.count("<figure><svg") == 3  # a heat map per measure of the label mode
    assert "Cross-lingual F1" in html and "trained on en, tested on de" in html
    assert "Human agreement on the same label set" in html
    run_page = boss.get(reverse("admin:modelzoo_benchmarkrun_change", args=[runs[0].pk])).content.decode()
    assert "All 4 runs launched with this one" in run_page


def test_a_data_scale_group_shows_its_curve(boss, label_set, django_capture_on_commit_callbacks):
    [first, _] = launched(
        django_capture_on_commit_callbacks, label_set, label_mode="binary", plan=Plan("data-scale", percents=(50, 100))
    )

    html = boss.get(reverse("admin:modelzoo_benchmarkrun_group", args=[first.group])).content.decode()

    assert "Data scale: pooled test scores" in html and html.count("<figure><svg") == 1
    assert "Pearson" not in html.split("Side by side")[1].split("Human agreement")[0]  # binary mode: no Pearson rows


def test_runs_picked_in_the_list_are_compared_side_by_side_and_downloaded(
    boss, label_set, django_capture_on_commit_callbacks
):
    first = launched(django_capture_on_commit_callbacks, label_set)[0]
    second = launched(django_capture_on_commit_callbacks, label_set, label_mode="scalar")[0]
    changelist = reverse("admin:modelzoo_benchmarkrun_changelist")

    picked = boss.post(changelist, {"action": "compare_runs", "_selected_action": [second.pk, first.pk]})
    html = boss.get(picked["Location"]).content.decode()
    rows = list(
        csv.DictReader(
            io.StringIO(
                boss.get(
                    reverse("admin:modelzoo_benchmarkrun_results", args=["csv"]), {"ids": f"{first.pk},{second.pk}"}
                ).content.decode()
            )
        )
    )
    results = boss.get(reverse("admin:modelzoo_benchmarkrun_results", args=["json"]), {"ids": str(first.pk)}).json()

    assert picked["Location"].endswith(f"?ids={first.pk},{second.pk}")
    assert f"#{first.pk} acoustic" in html and f"#{second.pk} acoustic" in html and "Human agreement" in html
    assert {row["run"] for row in rows} == {str(first.pk), str(second.pk)} and len(rows) == 2 * 3 * 3
    assert results[0]["metrics"] == first.metrics and results[0]["human_agreement"]


def test_a_run_page_polls_until_the_run_ends(boss, label_set, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        [queued] = benchmark_runs_launch(
            label_set=label_set, detector="acoustic", label_mode="binary", plan=Plan("multilingual")
        )
    progress = reverse("admin:modelzoo_benchmarkrun_progress", args=[queued.pk])

    waiting = boss.get(progress, headers={"HX-Request": "true"})
    boss.post(reverse("admin:modelzoo_benchmarkrun_cancel", args=[queued.pk]))
    ended = boss.get(progress, headers={"HX-Request": "true"})

    assert waiting.status_code == 200 and "hx-get" in waiting.content.decode()
    assert "waiting for a GPU worker" in waiting.content.decode()
    assert ended.status_code == 286 and ended["HX-Refresh"] == "true"  # htmx stops polling, the page reloads
    assert "cancelled" in ended.content.decode() and BenchmarkRun.objects.get().cancelled


def test_the_downloads_of_a_run_not_finished_answer_409(boss, label_set, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        [queued] = benchmark_runs_launch(
            label_set=label_set, detector="acoustic", label_mode="binary", plan=Plan("multilingual")
        )
    page = f"http://testserver{reverse('admin:modelzoo_benchmarkrun_change', args=[queued.pk])}"

    metrics = boss.get(reverse("admin:modelzoo_benchmarkrun_metrics", args=[queued.pk, "csv"]))
    checkpoint = boss.get(reverse("admin:modelzoo_benchmarkrun_file", args=[queued.pk, "checkpoint"]))

    for response in (metrics, checkpoint):
        assert response.status_code == 409 and response["Retry-After"] == "5"
        assert "not ready yet (waiting for a worker)" in response.content.decode() and page in response.content.decode()


def test_the_downloads_give_metrics_predictions_and_checkpoint(boss, label_set, django_capture_on_commit_callbacks):
    [run] = launched(django_capture_on_commit_callbacks, label_set)

    metrics = boss.get(reverse("admin:modelzoo_benchmarkrun_metrics", args=[run.pk, "json"]))
    link = boss.get(reverse("admin:modelzoo_benchmarkrun_file", args=[run.pk, "predictions"]))
    predictions = Client().get(link["Location"])  # the short-lived link needs no sign-in
    checkpoint = Client().get(
        boss.get(reverse("admin:modelzoo_benchmarkrun_file", args=[run.pk, "checkpoint"]))["Location"]
    )

    assert json.loads(metrics.content)["metrics"] == run.metrics
    assert metrics["Content-Disposition"] == f'attachment; filename="benchmark-run-{run.pk}-metrics.json"'
    assert predictions.status_code == 200
    assert f'filename="benchmark-run-{run.pk}-acoustic-predictions.csv"' in predictions["Content-Disposition"]
    lines = b"".join(predictions.streaming_content).decode().splitlines()
    assert lines[0].startswith("clip_id,language,variety,word_index,word") and len(lines) == run.predictions_count + 1
    assert b"".join(checkpoint.streaming_content)[:2] == b"PK"
    assert Client().get(link["Location"].replace("download/", "download/x")).status_code == 404


@pytest.mark.parametrize(
    ("method", "name", "args", "perms"),
    [
        ("get", "admin:modelzoo_benchmarkrun_add", [], ("evaluation.view_labelset",)),
        ("get", "admin:modelzoo_benchmarkrun_add", [], ("modelzoo.add_benchmarkrun",)),
        ("get", "admin:modelzoo_benchmarkrun_change", ["{run}"], ("modelzoo.add_benchmarkrun",)),
        ("get", "admin:modelzoo_benchmarkrun_progress", ["{run}"], ("modelzoo.add_benchmarkrun",)),
        ("post", "admin:modelzoo_benchmarkrun_cancel", ["{run}"], ("modelzoo.view_benchmarkrun",)),
        ("get", "admin:modelzoo_benchmarkrun_metrics", ["{run}", "json"], ("evaluation.view_labelset",)),
        ("get", "admin:modelzoo_benchmarkrun_file", ["{run}", "checkpoint"], ("evaluation.view_labelset",)),
        ("get", "admin:modelzoo_benchmarkrun_group", ["{group}"], ("evaluation.view_labelset",)),
        ("get", "admin:modelzoo_benchmarkrun_compare", [], ("evaluation.view_labelset",)),
        ("get", "admin:modelzoo_benchmarkrun_results", ["csv"], ("evaluation.view_labelset",)),
    ],
)
def test_staff_without_the_permission_get_403(method, name, args, perms, label_set, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        [run] = benchmark_runs_launch(
            label_set=label_set, detector="acoustic", label_mode="binary", plan=Plan("multilingual")
        )
    ids = {"{run}": run.pk, "{group}": run.group}
    url = reverse(name, args=[ids.get(arg, arg) for arg in args])

    response = getattr(browser(*perms), method)(url, {"ids": str(run.pk), "group": str(run.group)})

    assert response.status_code == 403
    assert BenchmarkRun.objects.get().status == BenchmarkRun.Status.QUEUED


def test_the_launch_action_is_offered_only_to_who_may_launch(label_set):
    changelist = reverse("admin:evaluation_labelset_changelist")

    viewer = browser("evaluation.view_labelset").get(changelist)
    launcher = browser(*LAUNCH_PERMS).get(changelist)
    refused = browser("evaluation.view_labelset").post(
        changelist, {"action": "launch_benchmark", "_selected_action": [label_set.pk]}
    )

    assert viewer.context["action_form"] is None
    assert [name for name, _ in launcher.context["action_form"].fields["action"].choices if name] == [
        "launch_benchmark"
    ]
    assert refused.status_code == 200 and not BenchmarkRun.objects.exists()  # no such action for this user


def test_the_launch_action_wants_one_final_set(boss, label_set):
    draft = LabelSet.objects.create(name="draft", version=1, parameters={})
    changelist = reverse("admin:evaluation_labelset_changelist")

    response = boss.post(changelist, {"action": "launch_benchmark", "_selected_action": [draft.pk]}, follow=True)

    assert "Select one final label set" in response.content.decode()


def test_runs_picked_in_the_list_are_cancelled_only_by_who_may_change_them(
    label_set, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        runs = benchmark_runs_launch(
            label_set=label_set, detector="acoustic", label_mode="binary", plan=Plan("monolingual")
        )
    changelist = reverse("admin:modelzoo_benchmarkrun_changelist")
    picked = {"action": "cancel_runs", "_selected_action": [run.pk for run in runs]}

    viewer = browser("modelzoo.view_benchmarkrun")
    assert [name for name, _ in viewer.get(changelist).context["action_form"].fields["action"].choices if name] == [
        "compare_runs"
    ]
    viewer.post(changelist, picked)
    assert not BenchmarkRun.objects.filter(cancel_requested=True).exists()

    browser("modelzoo.view_benchmarkrun", "modelzoo.change_benchmarkrun").post(changelist, picked)
    assert [run.cancelled for run in BenchmarkRun.objects.all()] == [True, True]


def test_the_launch_form_refuses_a_backbone_missing_from_the_checkpoint_folder(boss, label_set, settings, tmp_path):
    settings.MODELZOO_CHECKPOINT_DIR = tmp_path / "checkpoints"
    (tmp_path / "checkpoints").mkdir()

    page = boss.post(ADD, form(label_set, detector="whisper-tokens", backbone="whisper-smal"))

    assert page.status_code == 200
    errors = page.context["form"].errors
    assert "backbone &#x27;whisper-smal&#x27; not found" in page.content.decode()
    assert "whisper-smal" in errors["backbone"][0] and str(tmp_path / "checkpoints") in errors["backbone"][0]
    assert not BenchmarkRun.objects.exists()
