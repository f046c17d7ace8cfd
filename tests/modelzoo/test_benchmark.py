"""run_benchmark end to end with the acoustic baseline (the neural detectors' runs are in their
own test files): settings, progress, cancellation, saved model, plain-dict results."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from modelzoo.training.benchmark import run_benchmark
from modelzoo.training.detectors import load_detector
from modelzoo.training.detectors.base import Cancelled
from modelzoo.training.synthetic import synthetic_set, write_export_folder

pytest.importorskip("parselmouth")

ROOT = Path(__file__).resolve().parents[2]


def test_a_cross_lingual_run_tests_on_every_other_language(export_folder, tmp_path):
    phases = []
    result = run_benchmark(
        folder=export_folder,
        detector="acoustic",
        setting={"kind": "cross-lingual", "language": "de"},
        output_dir=tmp_path / "model",
        resamples=100,
        progress=lambda phase, done, total: phases.append(phase),
    )
    assert result["clips"] == {"train": 16, "validation": 2, "test": 2}
    assert result["test_languages"] == ["en"] and {row["language"] for row in result["predictions"]} == {"en"}
    pooled = result["metrics"]["pooled"]
    assert pooled["words"] == 8 and pooled["accuracy"]["value"] is not None
    # two test clips: no interval (a bootstrap of two clips reads "1.000 [1.000, 1.000]"), and why
    assert (pooled["accuracy"]["low"], pooled["accuracy"]["high"]) == (None, None)
    assert pooled["accuracy"]["interval_undefined"] == "too few clips for an interval: 2 (needs at least 5)"
    assert pooled["emphasized"] + pooled["marked"] >= 0 and pooled["emphasized"] <= pooled["words"]
    assert phases[0] == "reading the set" and phases[-1] == "finished" and "predicting" in phases
    json.dumps(result)  # plain data, ready to store

    saved = load_detector(tmp_path / "model")
    assert saved.kind == "acoustic" and saved.history == result["history"]


def test_a_cross_dataset_run_tests_on_the_other_sets_test_split(export_folder, tmp_path):
    other = write_export_folder(tmp_path / "other", synthetic_set(10, seed=9, languages=("en",)))
    result = run_benchmark(
        folder=export_folder,
        detector="acoustic",
        test_folder=other,
        resamples=0,
        setting={"kind": "cross-dataset", "language": "en"},
    )
    assert result["clips"]["test"] == 1 and result["predictions"][0]["clip_id"] == "en-0009"
    assert result["metrics"]["interval"] == "none"


def test_a_run_stops_when_asked(export_folder):
    asked = []

    def should_stop():
        asked.append(True)
        return len(asked) > 3

    with pytest.raises(Cancelled):
        run_benchmark(
            folder=export_folder, detector="acoustic", setting={"kind": "multilingual"}, should_stop=should_stop
        )


def test_unknown_detectors_and_settings_are_refused(export_folder):
    with pytest.raises(ValueError, match="unknown detector 'svm'"):
        run_benchmark(folder=export_folder, detector="svm", setting={"kind": "multilingual"})
    with pytest.raises(ValueError, match="unknown settings for AcousticConfig: epochz"):
        run_benchmark(folder=export_folder, detector="acoustic", setting={"kind": "multilingual"}, config={"epochz": 3})


def test_the_acoustic_baseline_and_the_benchmark_import_neither_torch_nor_django():
    probe = (
        "import sys, modelzoo.training.benchmark, modelzoo.training.detectors.acoustic, modelzoo.training.alignment, modelzoo.training.checkpoints\n"
        "print(sorted(m for m in ('torch', 'transformers', 'django') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert result.stdout.strip() == "[]"
