"""The demo's migrated database template (annotation/demo/database_template.py): what a fresh
clone's `make run` loads instead of running every migration. It must be what migrate makes today,
load back into that same database, and never be loaded where it could be wrong."""

import os
import re
import sqlite3
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.db.utils import ConnectionHandler

from annotation.demo.database_template import (
    HEAD,
    TEMPLATE,
    migration_hashes,
    template_changed_migrations,
    template_load,
    template_migrations,
)


@pytest.fixture
def own_databases(django_db_blocker):
    # SQLite files of the test's own, outside the test database that pytest-django guards.
    with django_db_blocker.unblock():
        yield


def test_the_template_is_what_migrate_makes_today():
    # Fails after a migration is added, edited or renamed until the template is written again:
    # `python manage.py demo_database_template`.
    call_command("demo_database_template", "--check")


def test_the_template_holds_every_migration_on_disk():
    # The same in short, naming what is missing (the check above says only that it differs).
    held, on_disk = template_migrations(TEMPLATE.read_text()), migration_hashes()
    assert sorted(set(on_disk) - set(held)) == []
    assert template_changed_migrations(held=held, on_disk=on_disk) == []


def test_loading_it_gives_back_the_database_it_was_written_from(tmp_path, own_databases):
    fresh = _sqlite_connection(tmp_path / "db.sqlite3")

    loaded = template_load(connection=fresh)

    assert loaded.used, loaded.why
    with fresh.cursor() as cursor:
        cursor.execute("PRAGMA foreign_keys")
        assert cursor.fetchone() == (1,)  # as Django keeps it in every connection
        cursor.execute("PRAGMA foreign_key_check")
        assert cursor.fetchall() == []
    fresh.close()
    dumped = list(sqlite3.connect(tmp_path / "db.sqlite3").iterdump())
    written = [line for line in TEMPLATE.read_text().splitlines() if not line.startswith((HEAD, "PRAGMA"))]
    assert dumped == written


@pytest.mark.parametrize(
    ("held", "why"),
    [
        ({"annotation.0001_initial": "edited-since"}, "annotation.0001_initial (changed)"),
        ({"annotation.0099_renumbered_since": "0"}, "annotation.0099_renumbered_since (gone)"),
    ],
)
def test_a_template_whose_migrations_changed_on_disk_is_not_loaded(tmp_path, own_databases, held, why):
    template = tmp_path / "template.sql"
    lines = [f"{HEAD}{name} {digest}" for name, digest in held.items()]
    template.write_text("\n".join([*lines, 'CREATE TABLE "would_be_wrong" ("id" integer);']) + "\n")
    fresh = _sqlite_connection(tmp_path / "db.sqlite3")

    loaded = template_load(connection=fresh, template=template)

    assert not loaded.used and why in loaded.why
    assert fresh.introspection.table_names() == []  # migrate builds it from nothing instead
    fresh.close()


def test_a_migration_newer_than_the_template_is_left_to_migrate():
    # The template is loaded and migrate applies the newer one on top: a merge that adds a
    # migration costs the first start its time, not its database.
    held = {"annotation.0001_initial": "a"}
    assert template_changed_migrations(held=held, on_disk={**held, "annotation.0002_newer": "b"}) == []


@pytest.mark.django_db
def test_a_database_with_tables_is_left_alone():
    loaded = template_load(connection=connection)
    why = "the database has its tables already"
    if connection.vendor == "postgresql":  # refused before its tables are looked at
        why = "a PostgreSQL database is migrated, not copied"
    assert not loaded.used and loaded.why == why


def test_a_fresh_clone_starts_from_the_template_and_ends_fully_migrated(tmp_path):
    environment = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    environment.update(DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="config.settings")

    def manage(*arguments):
        return subprocess.run(
            [sys.executable, "manage.py", *arguments],
            cwd=settings.BASE_DIR,
            env=environment,
            capture_output=True,
            text=True,
        )

    started = manage("demo_crowd", "--migrate")
    assert started.returncode == 0, started.stderr
    assert "Demo database: loaded the template" in started.stdout
    assert "No migrations to apply." in started.stdout
    assert re.search(r"[1-9][0-9]* simulated annotation\(s\) added", started.stdout)
    assert manage("migrate", "--check").returncode == 0


def _sqlite_connection(path):
    # SQLite whatever the tests run on (a DATABASE_URL of PostgreSQL): the template is SQLite's.
    return ConnectionHandler({"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path)}})["default"]
