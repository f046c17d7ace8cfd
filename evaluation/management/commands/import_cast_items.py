"""Import CAST items into a set (see evaluation.services.system_outputs.cast_items_import)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.ingest.errors import ImportRefused, SourceRefused
from evaluation.services.system_outputs import OutputsRefused, cast_items_import


class Command(BaseCommand):
    help = (
        "Import CAST items (a JSONL file: id, sentence, context_a, context_b, word_a, word_b, words, metadata) "
        "into a CAST set, made if new. Atomic: if any line is bad nothing is written; items already in the "
        "set must be unchanged."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="The items' JSONL file.")
        parser.add_argument("--set", dest="set_name", required=True, help="The CAST set's name.")

    def handle(self, *args, path, set_name, **options):
        try:
            summary = cast_items_import(path=path, set_name=set_name)
        except (SourceRefused, ImportRefused, OutputsRefused) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"CAST set {summary['set']!r}: {summary['created']} item(s) added, {summary['unchanged']} already "
            f"there unchanged; {summary['items']} in all."
        )
