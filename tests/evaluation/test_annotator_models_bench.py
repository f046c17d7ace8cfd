"""bench/annotator_models.py still runs and prints its table and summary, then the validation
harness's table and summary line, and the label set's speed, whose figures end that line (on small studies)."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "annotator_models.py"


def test_the_benchmark_prints_each_labelling_and_a_summary():
    result = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            *("--clips", "60", "--per-clip", "5", "--seeds", "2"),
            *("--harness-clips", "30", "--harness-seeds", "2", "--harness-per-clip", "3"),
            *("--harness-mixtures", "20 % heavy"),
            *("--speed-clips", "40", "--speed-small-clips", "5", "--speed-per-clip", "4"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[1] for line in lines[1:4]] == ["majority", "dawid-skene", "ordinal"]
    assert lines[4].startswith(
        "summary: spammers 10%, error of the ordinal model's labels against the majority's: 5/clip "
    )
    harness = lines[lines.index("validation harness: 30 clips x 15 words, 2 seeds, 95 % intervals over seeds") + 1 :]
    assert [line.split()[4] for line in harness[1:5]] == ["majority", "dawid-skene", "ordinal", "recommended"]
    assert lines[-1].startswith("harness: 1 mixture x listeners cells against the majority: dawid-skene worse in ")
    speed = lines[lines.index("speed: the ordinal model with 20 bootstrap refits, as a label set fits it") + 2 :]
    assert [line.split()[-4] for line in speed[:2]] == ["160", "20"]  # annotations: 40 and 5 clips x 4 listeners
    assert "; ordinal label set: 160 annotations in " in lines[-1] and "20 annotations in " in lines[-1]
