"""bench/adaptive.py still runs on a small study, and the exactness it reports holds there too."""

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "adaptive.py"


def test_the_adaptive_benchmark_prints_its_table_and_summary():
    result = subprocess.run(
        [sys.executable, str(BENCH), "--clips", "150", "--words", "10"],
        capture_output=True,
        text=True,
        timeout=900,  # the ordinal model's fits dominate: about 9 s each at this size
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    for text in (
        "honest:",
        "10 % spammers:",
        "20 % heavy-only:",
        "eps 0.02 + realloc",
        "greedy, model labels",
        "targets (honest mixture)",
    ):
        assert text in result.stdout
    # Exact stopping never changes a binary label, in every mixture.
    assert re.findall(r"^exact +\d+ +[\d.]+% +([\d.]+)%", result.stdout, re.M) == ["0.000"] * 3
    # Reallocation spends exactly the fixed design's budget.
    fixed = re.findall(r"^fixed 10 +(\d+)", result.stdout, re.M)
    assert re.findall(r"^eps 0.02 \+ realloc +(\d+)", result.stdout, re.M) == fixed
    assert re.findall(r"^greedy, model labels +(\d+)", result.stdout, re.M) == fixed
    assert result.stdout.strip().splitlines()[-1].startswith("adaptive: 150 clips x 10 words")
