"""`pytest --database-tests-only`: run only the tests whose outcome can depend on the database.

CI runs the suite once per database (.ci/run). A test that touches no database gives the same
result on both, so the PostgreSQL pass leaves it to the SQLite pass, which runs every test: no
test is dropped, and the two passes, side by side on two cores, end sooner.

A test counts as touching a database when pytest-django would let it (a `django_db` mark or a
database fixture, which a browser's live server also requests), when it is marked for a service
that reads the database (`postgres`, `worker`, `journey`), or when its module reads DATABASE_URL
(a subprocess or a skip that depends on the backend). pytest-django refuses the database to every
other test, so a test that is misjudged fails in the SQLite pass rather than being skipped.
"""

from functools import cache
from pathlib import Path

import pytest

OPTION = "--database-tests-only"
DATABASE_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_setup",
        "_django_db_helper",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "live_server",
    }
)
DATABASE_MARKS = ("django_db", "postgres", "worker", "journey")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        action="store_true",
        help="leave out the tests that touch no database (CI's PostgreSQL pass; the SQLite pass runs them)",
    )


@cache
def _module_reads_database_url(path: Path) -> bool:
    return "DATABASE_URL" in path.read_text(encoding="utf-8")


def touches_database(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(mark) for mark in DATABASE_MARKS):
        return True
    if DATABASE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    return _module_reads_database_url(Path(item.path))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption(OPTION):
        return
    kept = [item for item in items if touches_database(item)]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if not touches_database(item)])
        items[:] = kept
