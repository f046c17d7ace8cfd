"""bench/annotate_load.py still runs end to end (a few participants; the
64-participant run is the benchmark itself), and reads libpq's trace right."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_service

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench._probe import _round_trips  # noqa: E402  (bench/ is not a package)

TRACE = """F\t25\tParse\t "" "SELECT $1
 + 1" 1 NNNN
F\t22\tBind\t "" "" 1 1 1 2 '\\x00\\x00' 1 0
F\t9\tExecute\t "" 0
F\t4\tSync
B\t5\tReadyForQuery\t I
F\t32\tParse\t "_pg3_7" "UPDATE annotation_taskitem SET status = $1" 1 NNNN
F\t4\tSync
F\t29\tBind\t "" "_pg3_7" 1 1 1 2 '\\x00\\x02' 1 0
F\t4\tSync
F\t29\tBind\t "" "_pg3_7" 1 1 1 2 '\\x00\\x03' 1 0
F\t4\tSync
F\t13\tQuery\t "BEGIN"
"""


def test_round_trips_are_read_from_the_trace_prepared_statements_included():
    assert _round_trips(TRACE) == [
        "SELECT $1\n + 1",
        "PREPARE UPDATE annotation_taskitem SET status = $1",
        "UPDATE annotation_taskitem SET status = $1",
        "UPDATE annotation_taskitem SET status = $1",
        "BEGIN",
    ]


def run_bench(*arguments: str) -> subprocess.CompletedProcess:
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        pytest.skip("the load bench is run in the PostgreSQL pass of the suite")
    server = "postgres://postgres@127.0.0.1:5432"
    require_service("PostgreSQL", server)
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "annotate_load.py"), "--server", server, "--workers", "2", "--threads",
         "2", "--floor-seconds", "1", *arguments],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT,
        env={key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"},
    )  # fmt: skip


@pytest.mark.postgres
def test_the_load_benchmark_runs_and_checks_its_invariants():
    result = run_bench("--levels", "3", "--clips", "60", "--clips-per-task", "4")

    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert summary.startswith("annotate_load: 3 participants (gunicorn):") and "0 errors; invariants PASS" in summary
    for text in ("framework floor: an empty view", "bare psycopg at 3:", "a submit's round trips: SELECT"):
        assert text in result.stdout
    assert "events POST" not in result.stdout  # one request per clip: the reports travel with the submit


@pytest.mark.postgres
def test_the_realistic_mode_searches_for_the_most_participants_served():
    result = run_bench("--mode", "realistic", "--start", "2", "--most", "4", "--clips", "40", "--clips-per-task",
                       "3", "--target", "2", "--clip-seconds", "0.3,0.4", "--marking-seconds", "0.1,0.2",
                       "--level-seconds", "1.5", "--budget-seconds", "120")  # fmt: skip

    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "2 participants: " in result.stdout and "4 participants: " in result.stdout
    summary = result.stdout.strip().splitlines()[-1]
    assert summary == (
        "annotate_load realistic (gunicorn): 4 participants served with p99 <= 200 ms and no refusals "
        "(none failed up to 4); invariants PASS"
    )
