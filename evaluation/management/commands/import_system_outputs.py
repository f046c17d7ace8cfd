"""Import one system's outputs for a benchmark suite (see evaluation.services.system_outputs)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.ingest.errors import ImportRefused, SourceRefused
from annotation.models import Study
from evaluation.models import CastSet, System
from evaluation.services.system_outputs import SUITES, OutputsRefused, metadata_argument, system_outputs_import


class Command(BaseCommand):
    help = (
        "Import a system's outputs: StressTest or StanceBench answers (a JSONL file) or CAST renditions "
        "(a folder or .zip holding renditions.jsonl and the audio). Atomic: if any line is bad nothing is written."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version names the system's version here, in place of Django's (which prints Django's).
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="JSONL file (stresstest, stance) or folder / .zip (cast).")
        parser.add_argument("--suite", required=True, choices=SUITES)
        parser.add_argument("--system", required=True, help="The system's name; a new name makes a new system.")
        parser.add_argument("--version", dest="system_version", default="", help="The system's version.")
        parser.add_argument(
            "--kind",
            default="",
            choices=System.Kind.values,
            help="model, tts, judge or detector (default: the suite's).",
        )
        parser.add_argument("--study", help="Slug of the listening-form study whose items are answered.")
        parser.add_argument("--set", dest="cast_set", help="Name of the CAST set rendered (cast).")
        parser.add_argument("--replace", action="store_true", help="Replace the system's outputs already there.")
        parser.add_argument(
            "--metadata",
            help='The system\'s free metadata, a JSON object (e.g. \'{"prompt": "p2"}\'); '
            "merged into what the system has.",
        )

    def handle(self, *args, path, suite, system, system_version, kind, study, cast_set, replace, metadata, **options):
        try:
            summary = system_outputs_import(
                path=path,
                suite=suite,
                system_name=system,
                version=system_version,
                kind=kind,
                study=self._study(study),
                cast_set=self._cast_set(cast_set),
                replace=replace,
                metadata=None if metadata is None else metadata_argument(metadata),
            )
        except (SourceRefused, ImportRefused, OutputsRefused) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(_describe(summary))

    def _study(self, slug: str | None) -> Study | None:
        if slug is None:
            return None
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"no study with the slug {slug!r}")
        return study

    def _cast_set(self, name: str | None) -> CastSet | None:
        if name is None:
            return None
        cast_set = CastSet.objects.filter(name=name).first()
        if cast_set is None:
            raise CommandError(f"no CAST set named {name!r}; import its items first (import_cast_items)")
        return cast_set


def _describe(summary: dict) -> str:
    replaced = f", {summary['replaced']} replaced" if summary["replaced"] else ""
    if summary["suite"] == "cast":
        return (
            f"System {summary['system']!r}: {summary['renditions']} rendition(s) of CAST set {summary['set']!r} "
            f"({summary['clips_created']} new clip(s) in corpus {summary['corpus']!r}, "
            f"{summary['clips_reused']} already there){replaced}."
        )
    return (
        f"System {summary['system']!r}: {summary['outputs']} {summary['suite']} output(s) for {summary['items']} "
        f"item(s) of {', '.join(summary['studies'])}{replaced}."
    )
