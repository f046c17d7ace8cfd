"""The pure modules are pure when imported, not only in their source: each module the "statistics"
import contract of pyproject.toml names (evaluation/stats, evaluation/reports and the participant
side's pure rules) imports in a fresh interpreter without Django, the web app or the training stack,
and reaches no project module outside that list. `make lint` (lint-imports) checks the same lists
in the source; this test also sees what an import does at run time (a plugin, importlib)."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = {
    contract["id"]: contract
    for contract in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
}
PURE = tuple(CONTRACTS["statistics"]["source_modules"])
FORBIDDEN = {*CONTRACTS["pure"]["forbidden_modules"], *CONTRACTS["statistics"]["forbidden_modules"]}
PROJECT = {"annotation", "config", "modelzoo", "evaluation", "prolific"}
PROBE = """
import importlib, json, sys
before = set(sys.modules)
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def pure_modules() -> list[str]:
    found = []
    for module in PURE:
        path = ROOT.joinpath(*module.split("."))
        files = path.rglob("*.py") if path.is_dir() else [path.with_suffix(".py")]  # subpackages too
        found += [".".join(file.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__") for file in files]
    return sorted(found)


def imported_modules(module: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, module],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    return set(json.loads(result.stdout))


def is_pure(name: str) -> bool:
    """A pure module, or a package above one (importing evaluation.stats.x imports evaluation)."""
    return any(name == module or name.startswith(module + ".") or module.startswith(name + ".") for module in PURE)


def not_pure(modules: set[str]) -> list[str]:
    """Modules outside the pure layers: Django and friends, or project code that is not pure."""
    top = {name: name.split(".")[0] for name in modules}
    return sorted(name for name in modules if top[name] in FORBIDDEN or (top[name] in PROJECT and not is_pure(name)))


def test_the_pure_packages_hold_the_statistics():
    assert len(pure_modules()) >= 16
    assert "evaluation.stats.fleiss" in pure_modules() and "evaluation.reports.agreement" in pure_modules()
    assert "evaluation.stats.suites.stance" in pure_modules()  # subpackages are probed too
    assert "annotation.mismatch_rule" in pure_modules()  # and single modules


@pytest.mark.parametrize("module", pure_modules())
def test_a_pure_module_imports_no_django(module):
    assert not_pure(imported_modules(module)) == [], f"{module} reaches beyond the pure layers"


def test_the_probe_sees_django_and_the_web_side():
    found = not_pure(imported_modules("evaluation.apps"))  # a web-side module that imports Django
    assert "evaluation.apps" in found and "django.apps" in found
    assert not_pure({"annotation.models", "evaluation", "modelzoo.plans"}) == ["annotation.models", "modelzoo.plans"]
