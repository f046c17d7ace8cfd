from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.ingest.errors import ImportRefused, SourceRefused
from annotation.services.form_items_import import form_items_import


class Command(BaseCommand):
    help = (
        "Create a draft listening-form study from a folder or .zip holding items.jsonl and audio "
        "(StressTest samples or the generic layout; see README, Forms). Atomic: if any row is bad "
        "nothing is written, unless --skip-invalid."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="Folder or .zip archive holding items.jsonl.")
        parser.add_argument("--study", required=True, help="Name of the new study.")
        parser.add_argument("--corpus", help="Corpus the clips go into (default: the folder or archive name).")
        parser.add_argument("--skip-invalid", action="store_true", help="Import the good rows and list the bad ones.")
        parser.add_argument(
            "--with-ssd",
            action="store_true",
            help="StressTest rows: also ask which words are stressed (a stressed_words item per row).",
        )
        parser.add_argument("--language", default="", help="Language of clips whose row names none, e.g. en.")
        parser.add_argument("--items-per-form", type=int, help="Items in one participant's form (default 15).")
        parser.add_argument("--answers-per-item", type=int, help="Participants who answer each item (default 3).")

    def handle(self, *args, path, study, corpus, skip_invalid, with_ssd, language, **options):
        settings = {
            name: options[option]
            for name, option in (("clips_per_task", "items_per_form"), ("target_annotations", "answers_per_item"))
            if options[option] is not None
        }
        if any(value < 1 for value in settings.values()):
            raise CommandError("--items-per-form and --answers-per-item must be at least 1")
        try:
            result = form_items_import(
                path=path,
                study_name=study,
                corpus_name=corpus,
                skip_invalid=skip_invalid,
                with_ssd=with_ssd,
                language=language,
                **settings,
            )
        except (SourceRefused, ImportRefused) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"Draft study {result.study.name!r}: {result.items} item(s) over clips of corpus {result.corpus!r} "
            f"({result.clips_created} imported, {result.clips_reused} already there). Set it live in the admin."
        )
        if result.problems:
            self.stdout.write(self.style.WARNING(f"{len(result.problems)} problem(s); those rows were left out:"))
            for problem in result.problems:
                self.stdout.write(f"  {problem}")
