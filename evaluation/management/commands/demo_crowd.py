from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import connection

from annotation.demo.database_template import template_load
from annotation.models import Corpus, Study
from annotation.services.studies import ClipSelection, study_create, study_status_set
from evaluation.services.demo_crowd import demo_crowd_seed

CROWD_STUDY_SLUG = "demo-crowd"
CROWD_PER_CLIP = 5


class Command(BaseCommand):
    help = (
        "demo_setup (the demo corpus, the admin account, the demo study for you to try), then a second, closed "
        "study of the same clips annotated by a simulated crowd, whose agreement report, label sets and "
        "benchmarks have something to show. Each only once."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--migrate",
            action="store_true",
            help=(
                "migrate the database first (make run: one Django start fewer); a fresh SQLite database is "
                "loaded from the migrated template first (annotation/demo/database_template.py)"
            ),
        )

    def handle(self, *args, **options):
        if options["migrate"]:
            loaded = template_load(connection=connection)
            self.stdout.write(f"Demo database: {loaded.why}.")
            call_command("migrate", interactive=False, stdout=self.stdout)
        call_command("demo_setup", stdout=self.stdout)
        study = Study.objects.filter(slug=CROWD_STUDY_SLUG).first() or _crowd_study()
        written = demo_crowd_seed(study=study, per_clip=CROWD_PER_CLIP)
        self.stdout.write(
            f"Study {study.name!r}: {written} simulated annotation(s) added"
            + ("" if written else " (it has its crowd already)")
        )


def _crowd_study() -> Study:
    demo = Study.objects.get(slug="demo")
    study = study_create(
        name="Demo with a simulated crowd (English; not real people)",
        slug=CROWD_STUDY_SLUG,
        corpus=Corpus.objects.get(pk=demo.corpus_id),
        selection=ClipSelection(languages=["en"]),
        clips_per_task=demo.clips_per_task,
        target_annotations=CROWD_PER_CLIP,
        attention_checks_per_task=0,
        instructions=demo.instructions,
        consent_text=demo.consent_text,
        status=Study.Status.DRAFT,
        headphone_check=Study.HeadphoneCheck.NONE,  # its simulated annotators take no listening test
    )
    # Closed: nobody joins it; its annotators are the simulated ones (evaluation/services/demo_crowd.py).
    study = study_status_set(study=study, status=Study.Status.LIVE)
    return study_status_set(study=study, status=Study.Status.CLOSED)
