"""bench/annotator_models.py still runs and prints its table and summary (on small studies)."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "annotator_models.py"


def test_the_benchmark_prints_each_labelling_and_a_summary():
    result = subprocess.run(
        [sys.executable, str(BENCH), "--clips", "60", "--per-clip", "5", "--seeds", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[1] for line in lines[1:4]] == ["majority", "dawid-skene", "ordinal"]
    assert lines[-1].startswith(
        "summary: spammers 10%, error of the ordinal model's labels against the majority's: 5/clip "
    )
