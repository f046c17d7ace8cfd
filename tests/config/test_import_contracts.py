"""The import contracts of pyproject.toml (`make lint` runs them): the tree keeps them, and a climb
or an impure import breaks them with a message that names the import and its line. The broken
case runs on a copy of the tree, with the offending modules added."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = ("config", "annotation", "prolific", "evaluation", "modelzoo")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_tree_keeps_every_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert ", 0 broken." in result.stdout


def test_a_climb_and_an_impure_import_break_the_build_with_the_line(tmp_path):
    skip = shutil.ignore_patterns("__pycache__", "migrations", "demo_corpus", "*.wav")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "annotation" / "services" / "climb.py").write_text("from evaluation.models import LabelSet\n")
    (tmp_path / "evaluation" / "stats" / "impure.py").write_text("import json\n\nfrom django.db import models\n")

    result = lint_imports(tmp_path)

    assert result.returncode != 0
    assert "annotation is not allowed to import evaluation" in result.stdout
    assert "annotation.services.climb -> evaluation.models (l.1)" in result.stdout
    assert "evaluation.stats is not allowed to import django" in result.stdout
    assert "evaluation.stats.impure -> django (l.3)" in result.stdout
    assert ", 2 broken." in result.stdout  # the two contracts, nothing else


def test_annotation_never_imports_prolific_nor_prolific_evaluation(tmp_path):
    """prolific stands on annotation, beside evaluation: a climb from annotation and an import between
    the two apps of one floor are both refused."""
    skip = shutil.ignore_patterns("__pycache__", "migrations", "demo_corpus", "*.wav")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "annotation" / "services" / "climb.py").write_text("from prolific.models import BonusBatch\n")
    (tmp_path / "prolific" / "services" / "sideways.py").write_text("from evaluation.models import LabelSet\n")

    result = lint_imports(tmp_path)

    assert result.returncode != 0
    assert "annotation is not allowed to import prolific" in result.stdout
    assert "annotation.services.climb -> prolific.models (l.1)" in result.stdout
    assert "prolific is not allowed to import evaluation" in result.stdout
    assert "prolific.services.sideways -> evaluation.models (l.1)" in result.stdout


def test_an_import_up_the_layers_of_an_app_breaks_its_contract(tmp_path):
    """Inside an app, pages and API > services > selectors and data access > models (the
    `<app>-layers` contracts): a selector that imports a service, a service that imports a task
    (tasks are reached by name), and a module at an app's top that no layer names all break it."""
    skip = shutil.ignore_patterns("__pycache__", "migrations", "demo_corpus", "*.wav")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "evaluation" / "selectors" / "upward.py").write_text(
        "from evaluation.services.label_sets import label_set_create\n"
    )
    (tmp_path / "modelzoo" / "services" / "task_import.py").write_text("from modelzoo import tasks\n")
    (tmp_path / "prolific" / "unlayered.py").write_text("")

    result = lint_imports(tmp_path)

    assert result.returncode != 0
    assert "evaluation.selectors is not allowed to import evaluation.services" in result.stdout
    assert "evaluation.selectors.upward -> evaluation.services.label_sets (l.1)" in result.stdout
    assert "modelzoo.services is not allowed to import modelzoo.tasks" in result.stdout
    assert "modelzoo.services.task_import -> modelzoo.tasks (l.1)" in result.stdout
    assert "- prolific.unlayered" in result.stdout  # "not listed as layers"
    assert ", 3 broken." in result.stdout  # the three apps' layer contracts, nothing else
