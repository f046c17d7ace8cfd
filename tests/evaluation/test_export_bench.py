"""bench/export_scale.py still runs (on a small set; the MMEE-scale run is the benchmark itself)."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "export_scale.py"


def test_the_benchmark_runs_and_reports_its_figures():
    result = subprocess.run(
        [sys.executable, str(BENCH), "--clips", "200", "--resamples", "20"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    for text in (
        "1. build",
        "2. finalize",
        "3. JSONL export",
        "4. CSV export",
        "baseline",
        "peak",
        "bare json.dumps of the same rows",
        "with 20 resamples, not the default 1000",
        "target <= 30 s and 1 GB: met",
    ):
        assert text in result.stdout, text
    assert result.stdout.strip().splitlines()[-1].startswith("export_scale: 200 clips x 10 annotators x 15 words")
