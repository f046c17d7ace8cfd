"""How CI's passes share the suite (.ci/run): `--database-tests-only` and `--part K/N`.

CI runs the suite once per database. A test that touches no database gives the same result on
both, so the PostgreSQL pass leaves it to the SQLite pass (`--database-tests-only`), which runs
every test: no test is dropped. The PostgreSQL pass is then split in two processes (`--part 1/2`
and `--part 2/2`, each module in one of them, by a hash of its path): its tests spend much of
their time waiting on browsers, workers and the database, so three processes keep two cores
busier than two.

A test counts as touching a database when pytest-django would let it (a `django_db` mark or a
database fixture, which a browser's live server also requests), when it is marked for a service
that reads the database (`postgres`, `worker`, `journey`), or when its module reads DATABASE_URL
(a subprocess or a skip that depends on the backend). pytest-django refuses the database to every
other test, so a test that is misjudged fails in the SQLite pass rather than being skipped.
"""

import argparse
import zlib
from functools import cache
from pathlib import Path

import pytest

OPTION = "--database-tests-only"
PART = "--part"
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
    parser.addoption(
        PART,
        type=_part,
        metavar="K/N",
        help="run only the test modules of part K of N (modules shared out by a hash of their path)",
    )


def _part(text: str) -> tuple[int, int]:
    try:
        part, parts = (int(number) for number in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"K/N, two whole numbers (for example 1/2), not {text!r}") from None
    if not 1 <= part <= parts:
        raise argparse.ArgumentTypeError(f"{text}: K must be between 1 and N")
    return part, parts


def in_part(item: pytest.Item, part: int, parts: int) -> bool:
    """Whether the item's module is in part `part` of `parts`: the same for every run and machine."""
    module = Path(item.path).resolve().relative_to(item.config.rootpath).as_posix()
    return zlib.crc32(module.encode()) % parts == part - 1


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
    wanted = [_wanted_by_part(config.getoption(PART))]
    if config.getoption(OPTION):
        wanted.append(touches_database)
    kept = [item for item in items if all(test(item) for test in wanted)]
    if len(kept) < len(items):
        chosen = set(kept)
        config.hook.pytest_deselected(items=[item for item in items if item not in chosen])
        items[:] = kept


def _wanted_by_part(part: tuple[int, int] | None):
    if part is None:
        return lambda item: True
    return lambda item: in_part(item, *part)
