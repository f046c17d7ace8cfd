"""How CI's passes share the suite (tests/database_passes.py): the PostgreSQL pass leaves out only
the tests that cannot depend on the database."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PURE = "tests/evaluation/stats/test_ordinal_fit_reference.py"  # numpy only
MODULES = [
    PURE,
    "tests/api/test_studies.py",  # django_db
    "tests/browser/test_demo_task_pages.py",  # a live server
    "tests/annotation/test_load_bench.py",  # a subprocess on DATABASE_URL, skipped on SQLite
]


def collected(*options: str) -> tuple[set[str], set[str]]:
    """The tests of MODULES that a run with `options` keeps, and those it deselects."""
    report = ["-p", "tests.config.deselected_report", "-s"]  # -s: the plugin prints during collection
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *report, *options, *MODULES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    left = {line.removeprefix("deselected ") for line in lines if line.startswith("deselected ")}
    return {line for line in lines if "::" in line and not line.startswith("deselected ")}, left


def modules(test_ids: set[str]) -> set[str]:
    return {test_id.split("::")[0] for test_id in test_ids}


def test_the_postgresql_pass_leaves_out_only_the_tests_that_touch_no_database():
    kept, left = collected("--database-tests-only")
    assert modules(kept | left) == set(MODULES)
    assert modules(left) == {PURE}
    assert modules(kept) == set(MODULES) - {PURE}
