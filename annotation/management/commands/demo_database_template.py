import os
import subprocess
import sys
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.demo.database_template import TEMPLATE, migration_hashes, template_write_text


class Command(BaseCommand):
    help = (
        f"Write {TEMPLATE.relative_to(settings.BASE_DIR)}, the database that migrate makes from nothing, "
        "which make run loads on a fresh clone instead of migrating (annotation/demo/database_template.py). "
        "Run it after adding or changing a migration; --check only says whether it is current."
    )

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="fail if the template differs; write nothing")

    def handle(self, *args, **options):
        text = _template_text_now()
        written = TEMPLATE.read_text() if TEMPLATE.exists() else ""
        if options["check"]:
            if text != written:
                raise CommandError(
                    f"{TEMPLATE.relative_to(settings.BASE_DIR)} is not what migrate makes today "
                    "(a migration was added, changed or renamed since it was written): run "
                    "`python manage.py demo_database_template` and commit the file"
                )
            self.stdout.write("The demo database template is current.")
            return
        if text == written:
            self.stdout.write("The demo database template was current already.")
            return
        TEMPLATE.write_text(text)
        self.stdout.write(f"Wrote {TEMPLATE.relative_to(settings.BASE_DIR)} ({len(migration_hashes())} migrations).")


def _template_text_now() -> str:
    """Migrate a SQLite database from nothing in a process of its own, whatever this one is set
    to (a DATABASE_URL of PostgreSQL, a test database), and return its template text."""
    with tempfile.TemporaryDirectory(prefix="demo-template-") as scratch:
        environment = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
        environment.update(DATA_DIR=scratch, DJANGO_SETTINGS_MODULE="config.settings")
        migrated = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "--verbosity", "0"],
            cwd=settings.BASE_DIR,
            env=environment,
            capture_output=True,
            text=True,
        )
        if migrated.returncode:
            raise CommandError(f"migrate failed on a fresh SQLite database:\n{migrated.stderr}")
        return template_write_text(database=Path(scratch) / "db.sqlite3", hashes=migration_hashes())
