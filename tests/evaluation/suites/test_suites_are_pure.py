"""The suites' scoring is pure, as the rest of evaluation/stats: tests/evaluation/test_pure_layers.py
probes the modules at the top of evaluation/stats only, so the package's modules are probed here."""

from pathlib import Path

import pytest

from tests.evaluation.test_pure_layers import ROOT, imported_modules, not_pure

PACKAGE = ROOT / "evaluation" / "stats" / "suites"
MODULES = sorted(".".join(path.relative_to(ROOT).with_suffix("").parts) for path in PACKAGE.glob("*.py"))


def test_the_package_holds_the_scoring_modules():
    names = {Path(*module.split(".")).name for module in MODULES}
    assert {"__init__", "answers", "stresstest", "cast", "stance", "roc"} <= names


@pytest.mark.parametrize("module", MODULES)
def test_a_suites_module_imports_no_django(module):
    assert not_pure(imported_modules(module)) == [], f"{module} reaches beyond the pure layers"
