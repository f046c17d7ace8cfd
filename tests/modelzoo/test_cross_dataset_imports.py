"""Cross-dataset benchmarks with an imported public dataset as the second set, in both directions
(MMEE's Table 3: MMEE -> EmphAssess and EmphAssess -> MMEE), tasks in-process; a binary-only set
refuses any mode with a scalar head; the results say what the run was tested against."""

import pytest
from django.urls import reverse

from evaluation.models import LabelSet
from evaluation.services.label_set_imports import label_set_import
from modelzoo.models import BenchmarkRun
from modelzoo.plans import Plan
from modelzoo.selectors.benchmark_runs import run_results
from modelzoo.services.benchmark_runs import BenchmarkRefused, benchmark_runs_launch
from tests.evaluation.dataset_layouts import demo_emphassess_folder, emphassess_folder
from tests.modelzoo.builders import tiny_label_set

pytestmark = pytest.mark.django_db
pytest.importorskip("parselmouth")
pytest.importorskip("pocketsphinx")  # EmphAssess has no word times: the acoustic baseline aligns its words


@pytest.fixture
def tiny(corpus_folder):
    return tiny_label_set(corpus_folder, languages=("en",), per_language=8)


def imported(tmp_path, *, splits: str, name: str = "EmphAssess", demo: bool = False) -> LabelSet:
    gold, audio = (demo_emphassess_folder if demo else emphassess_folder)(tmp_path / name)
    return label_set_import(format_key="emphassess", path=gold, audio_folder=audio, name=name, splits=splits)


def launch(capture, **arguments) -> BenchmarkRun:
    with capture(execute=True):
        [run] = benchmark_runs_launch(detector="acoustic", plan=Plan("cross-dataset", language="en"), **arguments)
    return BenchmarkRun.objects.get(pk=run.pk)


@pytest.mark.parametrize("label_mode", ["scalar", "both"])
def test_a_binary_only_set_refuses_a_scalar_head_as_either_set(tiny, tmp_path, label_mode):
    emphassess = imported(tmp_path, splits="test")
    for sets in ({"label_set": tiny, "test_label_set": emphassess}, {"label_set": emphassess, "test_label_set": tiny}):
        with pytest.raises(BenchmarkRefused) as refused:
            benchmark_runs_launch(detector="acoustic", label_mode=label_mode, plan=Plan("cross-dataset"), **sets)
        assert refused.value.field == "label_mode"
        assert str(refused.value) == (
            "EmphAssess v1 has binary labels only (EmphAssess: Prescribed by the script (the speaker was told what "
            "to stress); binary labels): it cannot train or test a scalar head; "
            f"choose the label mode \"binary\", not '{label_mode}'"
        )
    assert not BenchmarkRun.objects.exists()


def test_trained_here_tested_on_the_imported_set(tiny, tmp_path, django_capture_on_commit_callbacks, admin_client):
    emphassess = imported(tmp_path, splits="test", demo=True)

    run = launch(django_capture_on_commit_callbacks, label_set=tiny, test_label_set=emphassess, label_mode="binary")

    assert run.status == BenchmarkRun.Status.SUCCEEDED, run.error
    assert run.details["clips"]["test"] == 24 and run.metrics["pooled"]["words"] > 0
    results = run_results(run)
    assert results["tested_against"]["label_source"] == "prescribed"
    assert results["tested_against"]["dataset"] == "EmphAssess"
    assert results["trained_on"]["label_source"] == "human_crowd"
    page = admin_client.get(reverse("admin:modelzoo_benchmarkrun_change", args=[run.pk])).content.decode()
    assert "Tested against" in page and "EmphAssess: Prescribed by the script" in page
    # what the scores were measured against, named above them, with that set's own agreement first
    assert "Tested on another set's test split: <strong>EmphAssess v1</strong>: EmphAssess: Prescribed" in page
    assert page.index("Human agreement on the test set, EmphAssess v1") < page.index(
        "Human agreement on the training set, tiny v1"
    )
    assert "EmphAssess v1 (EmphAssess: Prescribed by the script" in page
    assert "its labels were not marked by several annotators, so there is no agreement between annotators" in page
    assert {row["label_set"] for row in results["human_agreement"]} == {"tiny v1"}  # EmphAssess has none


def test_trained_on_the_imported_set_tested_here(tiny, tmp_path, django_capture_on_commit_callbacks):
    emphassess = imported(tmp_path, splits="assign", demo=True)

    run = launch(django_capture_on_commit_callbacks, label_set=emphassess, test_label_set=tiny, label_mode="binary")

    assert run.status == BenchmarkRun.Status.SUCCEEDED, run.error
    assert run.details["clips"]["test"] == 2  # the tiny set's test split
    assert run_results(run)["tested_against"]["label_source"] == "human_crowd"
    assert run_results(run)["trained_on"]["provenance"].startswith("EmphAssess: Prescribed by the script")
