"""evaluation/stats and evaluation/reports are pure: each module imports in a fresh interpreter
without Django, the web app or the training stack, and reaches no other part of evaluation."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PURE_PACKAGES = ("evaluation/stats", "evaluation/reports")
FORBIDDEN = {"django", "celery", "kombu", "rest_framework", "storages", "boto3", "torch", "transformers"}
PROJECT = {"annotation", "config", "modelzoo", "evaluation"}
PROBE = """
import importlib, json, sys
before = set(sys.modules)
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def pure_modules() -> list[str]:
    return sorted(
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for package in PURE_PACKAGES
        for path in (ROOT / package).rglob("*.py")  # subpackages too (evaluation/stats/suites)
    )


def imported_modules(module: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, module], cwd=ROOT, capture_output=True, text=True, check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    return set(json.loads(result.stdout))


def not_pure(modules: set[str]) -> list[str]:
    """Modules outside the pure layers: Django and friends, or project code that is not pure."""
    return sorted(
        name
        for name in modules
        if name.split(".")[0] in FORBIDDEN
        or (name.split(".")[0] in PROJECT and name not in {"evaluation", "evaluation.stats", "evaluation.reports"}
            and not name.startswith(("evaluation.stats.", "evaluation.reports.")))
    )  # fmt: skip


def test_the_pure_packages_hold_the_statistics():
    assert len(pure_modules()) >= 16
    assert "evaluation.stats.fleiss" in pure_modules() and "evaluation.reports.agreement" in pure_modules()
    assert "evaluation.stats.suites.stance" in pure_modules()  # subpackages are probed too


@pytest.mark.parametrize("module", pure_modules())
def test_a_pure_module_imports_no_django(module):
    assert not_pure(imported_modules(module)) == [], f"{module} reaches beyond the pure layers"


def test_the_probe_sees_django_and_the_web_side():
    found = not_pure(imported_modules("evaluation.apps"))  # a web-side module that imports Django
    assert "evaluation.apps" in found and "django.apps" in found
