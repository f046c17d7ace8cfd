"""The demo's database, migrated ahead of time.

A fresh clone's `make run` loads `migrated_database.sql` (beside this module) into its new SQLite
file instead of running every migration from nothing, which was most of the first start: 7.4 s
of CPU of the start's ~12 in the migrating and seeding process, 13-22 s of wall time on a loaded
two-core machine. Loading the text takes 0.05 s; `migrate` then applies whatever is newer than
the template, so a template behind the code costs time, never correctness.

The template is the SQL text (sqlite3's `iterdump`) of a database that `migrate` made from
nothing: the tables and indexes, and the rows migrate writes (content types, permissions, the
applied migrations). It holds no demo data: the demo corpus, the admin and the studies are
created at start as before, so what they are never goes stale. Its head lists each migration it
holds with a hash of the migration's file; it is used only where every one of them is on disk
unchanged (a migration edited, renamed or renumbered since, or another Django, means migrating
from nothing, as without a template).

`manage.py demo_database_template` writes it; `--check` fails when it is not what migrate makes
today (tests/annotation/test_demo_database_template.py runs that).
"""

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

TEMPLATE = Path(__file__).with_name("migrated_database.sql")
HEAD = "-- migration "
# Every applied migration's row says when: one fixed time, so that writing the template again
# from the same migrations gives the same text (a diff that shows only what changed).
APPLIED_AT = "2000-01-01 00:00:00"


def migration_hashes() -> dict[str, str]:
    """`app.name` of each migration on disk (Django's own included) -> a hash of its file."""
    from django.db.migrations.loader import MigrationLoader

    loader = MigrationLoader(None, ignore_no_migrations=True)
    hashes = {}
    for (app, name), migration in loader.disk_migrations.items():
        source = Path(sys.modules[type(migration).__module__].__file__)
        hashes[f"{app}.{name}"] = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    return dict(sorted(hashes.items()))


def template_write_text(*, database: Path, hashes: dict[str, str]) -> str:
    """The template's text: the head (one line per migration), then the SQL of `database`, a
    SQLite file that migrate made from nothing (its migration times are overwritten)."""
    import sqlite3

    connection = sqlite3.connect(database)
    try:
        with connection:
            connection.execute("UPDATE django_migrations SET applied = ?", (APPLIED_AT,))
        statements = list(connection.iterdump())
    finally:
        connection.close()
    head = [f"{HEAD}{name} {digest}" for name, digest in hashes.items()]
    # The dump runs in the order of the tables' names: a row may come before the table its
    # foreign key names (auth_permission before django_content_type), as in sqlite3's `.dump`.
    return "\n".join([*head, "PRAGMA foreign_keys=OFF;", *statements]) + "\n"


def template_migrations(text: str) -> dict[str, str]:
    """The migrations a template's head lists, with their hashes."""
    held = {}
    for line in text.splitlines():
        if not line.startswith(HEAD):
            break
        name, digest = line.removeprefix(HEAD).split()
        held[name] = digest
    return held


def template_changed_migrations(*, held: dict[str, str], on_disk: dict[str, str]) -> list[str]:
    """The migrations the template holds that are not on disk as they were: renamed or removed
    ("gone") or edited ("changed"). None: the template may be loaded."""
    return [
        f"{name} ({'gone' if name not in on_disk else 'changed'})"
        for name, digest in held.items()
        if on_disk.get(name) != digest
    ]


@dataclass(frozen=True)
class Loaded:
    used: bool
    why: str  # one sentence for make run's output


def template_load(*, connection, template: Path = TEMPLATE) -> Loaded:
    """Load the template into `connection`'s database if that is a SQLite database with no
    tables yet and the template's migrations are all on disk unchanged. migrate runs after it
    either way."""
    if connection.vendor != "sqlite":
        return Loaded(False, f"a {connection.display_name} database is migrated, not copied")
    if connection.introspection.table_names():
        return Loaded(False, "the database has its tables already")
    if not template.exists():
        return Loaded(False, f"no template at {template}")
    text = template.read_text()
    held = template_migrations(text)
    changed = template_changed_migrations(held=held, on_disk=migration_hashes())
    if changed:
        return Loaded(False, f"the template is older than {', '.join(changed[:3])}; migrating from nothing")
    connection.ensure_connection()
    connection.connection.executescript(text)
    # Django keeps foreign keys on in every connection; the script turned them off to load.
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA foreign_keys = ON")
    return Loaded(True, f"loaded the template migrated to {len(held)} migrations")
