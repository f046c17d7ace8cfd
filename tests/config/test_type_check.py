"""The type check `make lint` runs (mypy with django-stubs' plugin, [tool.mypy] in pyproject.toml):
with the project's own configuration it passes a well-typed service and fails a deliberate type
error, naming the file, the line and the error's code. The whole tree's check is `make lint`'s
(CI runs it); here two small modules are checked, so that the test takes seconds, not minutes."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MYPY = Path(sys.executable).with_name("mypy")

TYPED = """from annotation.models import Study


def study_target(study: Study) -> int:
    return study.target_annotations
"""
MISTYPED = """from annotation.models import Study


def study_target(study: Study) -> str:
    return study.target_annotations
"""


def test_the_configuration_passes_typed_code_and_fails_a_type_error(tmp_path):
    (tmp_path / "typed_service.py").write_text(TYPED)
    (tmp_path / "mistyped_service.py").write_text(MISTYPED)
    result = subprocess.run(
        [
            str(MYPY),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(tmp_path / "typed_service.py"),
            str(tmp_path / "mistyped_service.py"),
        ],
        cwd=ROOT,
        env={**os.environ, "SECRET_KEY": os.environ.get("SECRET_KEY", "type-check")},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, result.stdout
    # The plugin knows the model's field is an int: the error is the field's type, not Any.
    assert 'mistyped_service.py:5: error: Incompatible return value type (got "int", expected "str")' in errors[0]
    assert errors[0].endswith("[return-value]")
