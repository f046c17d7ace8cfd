"""Export a final label set (or a study's raw annotations) as a zip, built in this process."""

import shutil
from pathlib import Path

from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from evaluation.management.commands.labelset_finalize import label_set_named
from evaluation.models import DatasetExport
from evaluation.services.dataset_exports import ExportRefused, dataset_export_request, dataset_export_run

Format = DatasetExport.Format


class Command(BaseCommand):
    help = "Export a final label set as a zip with a data card (or, with --format raw --study SLUG, a study's raw annotations)."

    def add_arguments(self, parser):
        parser.add_argument("name", nargs="?", help="the label set's name (not for --format raw)")
        parser.add_argument("--set-version", dest="set_version", type=int, help="default: the newest version")
        parser.add_argument("--format", required=True, choices=Format.values)
        parser.add_argument("--study", help="raw exports: the study's slug")
        parser.add_argument(
            "--prolific-ids",
            action="store_true",
            help="raw exports: a participant column with each annotator's Prolific id (or local #N) beside the opaque id",
        )
        parser.add_argument("--output", type=Path, required=True, help="the zip to write, or a folder to write it in")

    def handle(self, *args, **options):
        try:
            export = dataset_export_request(**self._source(options), enqueue=False)
        except ExportRefused as error:
            raise CommandError(str(error)) from None
        reused = export.status == DatasetExport.Status.SUCCEEDED
        if not reused:
            dataset_export_run(export_id=export.pk)
            export.refresh_from_db()
        if export.status != DatasetExport.Status.SUCCEEDED:
            raise CommandError(f"{export} was not exported: {export.error}")
        target = options["output"] / export.file_name if options["output"].is_dir() else options["output"]
        with default_storage.open(export.file.name, "rb") as source, target.open("wb") as copy:
            shutil.copyfileobj(source, copy, 1024 * 1024)
        self.stdout.write(
            f"{export}: {target} ({export.size} bytes, sha256 {export.sha256})"
            + (", the same as an earlier export" if reused else "")
        )

    def _source(self, options) -> dict:
        if options["format"] == Format.RAW:
            if options["name"] or options["set_version"]:
                raise CommandError("a raw export is of a study's annotations: give --study SLUG, not a label set")
            if not options["study"]:
                raise CommandError("--format raw needs --study SLUG")
            study = Study.objects.filter(slug=options["study"]).first()
            if study is None:
                raise CommandError(f"no study with slug {options['study']!r}")
            return {"format": Format.RAW, "study": study, "include_prolific_ids": options["prolific_ids"]}
        if not options["name"]:
            raise CommandError(f"--format {options['format']} exports a label set: give its NAME")
        if options["study"] or options["prolific_ids"]:
            raise CommandError("--study and --prolific-ids are for --format raw only")
        return {"format": options["format"], "label_set": label_set_named(options["name"], options["set_version"])}
