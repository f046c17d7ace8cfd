"""The task and job-kind tables of docs/development.md are held to the code: every Celery task of the
project's apps and every background-job model is listed, and nothing is listed that does not exist.
A new task or job kind fails here until its row is written."""

import re
from pathlib import Path

from annotation.shared.jobs import job_kinds
from config.celery import app as celery_app

DEVELOPMENT = Path(__file__).resolve().parents[2] / "docs" / "development.md"
TASK_TABLE = "| task name | was |"
JOB_TABLE = "| job kind | what it is | its task |"


def table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of each row of the table whose header line is `header` (the separator line skipped)."""
    lines = text.splitlines()
    start = lines.index(header) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def first_code(cell: str) -> str:
    """The first `name` written in code in a cell: what the row is about, before any remark."""
    return re.search(r"`([^`]+)`", cell).group(1)


def documented_tasks(text: str) -> list[str]:
    return [first_code(row[0]) for row in table_rows(text, TASK_TABLE)]


def documented_jobs(text: str) -> dict[str, str]:
    """Job model label -> the task named for it."""
    return {first_code(row[0]): first_code(row[2]) for row in table_rows(text, JOB_TABLE)}


def registered_tasks() -> set[str]:
    celery_app.loader.import_default_modules()  # registers the tasks of every app, as a worker does
    return {name for name in celery_app.tasks if not name.startswith("celery.")}


def test_the_task_table_lists_every_registered_task_once():
    listed = documented_tasks(DEVELOPMENT.read_text())
    assert len(listed) == len(set(listed)), "a task is listed twice"
    assert set(listed) == registered_tasks()


def test_the_job_table_lists_every_job_kind_with_its_task():
    listed = documented_jobs(DEVELOPMENT.read_text())
    assert listed == {model._meta.label: model.TASK_NAME for model in job_kinds()}


def test_every_job_kinds_task_is_registered():
    assert {model.TASK_NAME for model in job_kinds()} <= registered_tasks()
