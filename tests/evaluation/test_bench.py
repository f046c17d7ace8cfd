"""bench/agreement_scale.py still runs (on a small study; the MMEE-scale run is the benchmark itself)."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "agreement_scale.py"


def test_the_benchmark_runs_and_reports_its_figures():
    result = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--clips",
            "400",
            "--resamples",
            "100",
            "--package-resamples",
            "3",
            "--large-clips",
            "800",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    for text in (
        "1. required core",
        "2. full report",
        "3. pooled ordinal-alpha bootstrap",
        "4. Light's kappa",
        "5. ten times MMEE: 800 clips",
        "peak memory",
        "targets met",
    ):
        assert text in result.stdout
    difference = float(result.stdout.split("largest difference over the shared resamples ")[1].split()[0])
    assert difference < 1e-9
