"""The hand-written SQL of the submit path leaves the same rows on SQLite and on PostgreSQL:
fixed rows in each pass of the suite, and in the PostgreSQL pass the same run on a fresh SQLite
database side by side. Counts, review states, task and participant completion, answers, reports."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from annotation.models import StudyItem
from annotation.services.study_item_review import mismatch_sends_to_review
from tests.annotation.submission_scenario import THRESHOLD, run_scenario

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
Review = StudyItem.Review


def test_the_submissions_leave_exactly_these_rows():
    rows = run_scenario()

    assert [mismatch_sends_to_review(reports=reports, threshold=THRESHOLD) for reports in (1, 2)] == [False, True]
    # clip rank, completed, reserved (the fourth participant's), mismatch reports, review
    assert rows["study_items"] == [[0, 2, 0, 2, Review.NEEDS_REVIEW], [1, 3, 1, 0, Review.ACTIVE]]
    assert rows["tasks"] == [[0, "completed", True], [1, "completed", True], [2, "completed", True], [3, "open", False]]
    assert rows["participants"] == [[0, True], [1, True], [2, True], [3, False]]
    assert rows["task_items"] == [
        [0, 0, "submitted"],
        [0, 1, "submitted"],
        [1, 0, "submitted"],
        [1, 1, "submitted"],
        [2, 1, "submitted"],
        [3, 1, "pending"],
    ]
    assert [
        (person, clip, levels.index(1) if 1 in levels else None, mismatch, coverage, passed)
        for person, clip, levels, mismatch, coverage, passed in rows["annotations"]
    ] == [
        (0, 0, 0, True, 1.0, None),
        (0, 1, 0, False, 1.0, None),
        (1, 0, 1, True, 1.0, None),
        (1, 1, 1, False, 1.0, None),
        (2, 1, 2, False, 1.0, None),
    ]
    kept = [event for event in rows["events"] if event[6] == 100]
    assert kept == [[2, 1, "play", 0, 0.0, 1.0, 100.0, 0]]  # the refused answer's report, kept
    assert len(rows["events"]) == 1 + 5 * 10  # and each listening: play, 8 timeupdates, ended


@pytest.mark.postgres
def test_sqlite_and_postgresql_store_the_same_rows_side_by_side(tmp_path):
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        pytest.skip("compared in the PostgreSQL pass of the suite")
    on_postgres = run_scenario()
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-m", "tests.annotation.submission_scenario", f"sqlite:///{tmp_path / 'compare.sqlite3'}"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    on_sqlite = json.loads(result.stdout.strip().splitlines()[-1])

    assert on_sqlite == json.loads(json.dumps(on_postgres))  # through JSON: tuples as lists on both sides
