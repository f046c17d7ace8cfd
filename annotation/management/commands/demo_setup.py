import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from annotation.models import Corpus, Study
from annotation.services.corpus_import import corpus_import
from annotation.services.studies import ClipSelection, study_create, study_status_set, task_minutes_estimate

DEMO_CORPUS = "Demo (synthetic, espeak-ng)"
DEMO_STUDY_SLUG = "demo"
ADMIN_USERNAME = "admin"
DEMO_INSTRUCTIONS = """You will hear short English sentences spoken by a speech synthesizer.
In each, the speaker stresses one or two words more than the others.

1. Play the clip to the end (you may replay it).
2. Click each word you heard emphasized; click again for *heavily* emphasized.
3. Submit. Answers are final.
"""


class Command(BaseCommand):
    help = "Load the synthetic demo corpus and create an admin account (both only once)."

    def handle(self, *args, **options):
        folder = Path(settings.BASE_DIR) / "annotation" / "demo_corpus"
        report = corpus_import(path=folder, corpus_name=DEMO_CORPUS)
        self.stdout.write(
            f"Demo corpus {DEMO_CORPUS!r}: {report.created} clip(s) added, {report.unchanged} already there."
        )
        self.stdout.write(self._admin_login())
        self.stdout.write(self._demo_study())

    def _demo_study(self) -> str:
        study = Study.objects.filter(slug=DEMO_STUDY_SLUG).first()
        if study is None:
            study = study_create(
                name="Demo emphasis study (English)",
                slug=DEMO_STUDY_SLUG,
                corpus=Corpus.objects.get(name=DEMO_CORPUS),
                selection=ClipSelection(languages=["en"]),
                clips_per_task=5,
                target_annotations=3,
                attention_checks_per_task=0,
                instructions=DEMO_INSTRUCTIONS,
                consent_text="This is a demonstration. Your answers are stored in this local database only.",
                status=Study.Status.DRAFT,
                # Tried on any device, with or without headphones; turn the check on on its page to see it.
                headphone_check=Study.HeadphoneCheck.NONE,
            )
            # The consent page states this duration: computed from the clips, not a default.
            study.estimated_minutes = task_minutes_estimate(study)
            study.save(update_fields=["estimated_minutes"])
            study = study_status_set(study=study, status=Study.Status.LIVE)
        return f"Demo study {study.name!r} ({study.get_status_display()}): participant link /s/{study.slug}/"

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
