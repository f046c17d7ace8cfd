import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from annotation.ingest.pipeline import corpus_import

DEMO_CORPUS = "Demo (synthetic, espeak-ng)"
ADMIN_USERNAME = "admin"


class Command(BaseCommand):
    help = "Load the synthetic demo corpus and create an admin account (both only once)."

    def handle(self, *args, **options):
        folder = Path(settings.BASE_DIR) / "annotation" / "demo_corpus"
        report = corpus_import(path=folder, corpus_name=DEMO_CORPUS)
        self.stdout.write(
            f"Demo corpus {DEMO_CORPUS!r}: {report.created} clip(s) added, {report.unchanged} already there."
        )
        self.stdout.write(self._admin_login())

    def _admin_login(self) -> str:
        credentials = Path(settings.DATA_DIR) / "admin-credentials.txt"
        User = get_user_model()
        if not User.objects.filter(username=ADMIN_USERNAME).exists():
            password = secrets.token_urlsafe(12)
            User.objects.create_superuser(ADMIN_USERNAME, "", password)
            credentials.write_text(f"{ADMIN_USERNAME} {password}\n")
            credentials.chmod(0o600)
        if credentials.exists():
            username, password = credentials.read_text().split()
            return f"Admin login: user {username!r}, password {password!r} (kept in {credentials})"
        return f"Admin login: user {ADMIN_USERNAME!r} (its password was set by hand)"
