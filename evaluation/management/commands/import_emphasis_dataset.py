from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.ingest.errors import ImportRefused
from annotation.services.crowd_study_import import crowd_study_import
from evaluation.ingest.emphasis_datasets import FORMATS
from evaluation.models import LabelSet
from evaluation.services.label_set_imports import SPLIT_MODES, crowd_label_set_step, label_set_import
from evaluation.services.label_sets import LabelSetRefused

CROWD_FORMAT = "morrison"


class Command(BaseCommand):
    help = (
        "Import a published emphasis dataset, its audio from a local folder (nothing is downloaded): "
        "EmphAssess, TinyStress-15K or StressTest as a corpus and a final label set; Morrison et al.'s "
        "crowdsourced LibriTTS annotations as a corpus and a closed binary study (and, with --label-set, "
        "its label set). Atomic: if any record is bad nothing is written, and every bad record is named; "
        "with --skip-invalid the bad records are left out and each is listed with its reason."
    )

    def add_arguments(self, parser):
        parser.add_argument("format", choices=[*FORMATS, CROWD_FORMAT])
        parser.add_argument(
            "path",
            type=Path,
            help="gold_df.json; a Hugging Face dataset folder or file (Parquet, a save_to_disk folder, "
            ".jsonl/.json); annotations.json",
        )
        parser.add_argument(
            "--audio",
            type=Path,
            help="The folder holding the dataset's audio files (not needed where the Parquet or Arrow files "
            "embed the audio).",
        )
        parser.add_argument("--name", required=True, help="The label set's name (morrison: the study's).")
        parser.add_argument("--corpus", help="Corpus the clips go into (default: the dataset's name, or the study's).")
        parser.add_argument(
            "--splits",
            choices=SPLIT_MODES,
            default="given",
            help='"given": the layout\'s split files; "assign": drawn per language, seeded; or one split for all.',
        )
        parser.add_argument("--split-seed", type=int, default=0)
        parser.add_argument(
            "--label-source",
            choices=LabelSet.LabelSource.values,
            help="Where the labels come from, if not the default.",
        )
        parser.add_argument(
            "--skip-invalid",
            action="store_true",
            help="Import the records that can be, and list each one left out with its reason.",
        )
        parser.add_argument("--draft", action="store_true", help="Leave the label set a draft (finalize it later).")
        parser.add_argument("--label-set", help="morrison: also build and finalize a label set of this name.")
        parser.add_argument(
            "--keep-all-annotators", action="store_true", help="morrison: do not apply the emphases project's filters."
        )

    def handle(self, *args, format, path, audio, name, **options):
        if audio is None and format in ("emphassess", CROWD_FORMAT):
            raise CommandError(f"{format}: give --audio, the folder holding the dataset's audio files")
        if audio is not None and not audio.is_dir():
            raise CommandError(f"--audio {audio}: not a folder")
        try:
            if format == CROWD_FORMAT:
                self._crowd(path, audio, name, options)
            else:
                self._labelled(format, path, audio, name, options)
        except (ImportRefused, LabelSetRefused, FileNotFoundError) as error:
            raise CommandError(str(error)) from None

    def _labelled(self, format, path, audio, name, options) -> None:
        label_set = label_set_import(
            format_key=format,
            path=path,
            audio_folder=audio,
            name=name,
            corpus_name=options["corpus"],
            splits=options["splits"],
            split_seed=options["split_seed"],
            label_source=options["label_source"],
            finalize=not options["draft"],
            skip_invalid=options["skip_invalid"],
        )
        counts = ", ".join(
            f"{language}: " + ", ".join(f"{split} {n}" for split, n in sorted(splits.items()))
            for language, splits in sorted(label_set.summary["counts"].items())
        )
        self.stdout.write(
            f"Label set {label_set} ({label_set.lifecycle}): {label_set.summary['clips']} clip(s) ({counts}); "
            f"labels: {label_set.provenance}."
        )
        self._skipped(label_set.source.get("skipped", []))

    def _skipped(self, skipped: list[dict]) -> None:
        if skipped:
            self.stdout.write(f"Skipped {len(skipped)} record(s), not imported:")
        for problem in skipped:
            clip = f" (clip {problem['clip_id']!r})" if problem["clip_id"] else ""
            field = f", {problem['field']}" if problem["field"] else ""
            self.stdout.write(f"  {problem['where']}{clip}{field}: {problem['reason']}")

    def _crowd(self, path, audio, name, options) -> None:
        report = crowd_study_import(
            path=path,
            audio_folder=audio,
            study_name=name,
            corpus_name=options["corpus"],
            apply_filters=not options["keep_all_annotators"],
            then=crowd_label_set_step(name=options["label_set"]),
            skip_invalid=options["skip_invalid"],
        )
        self.stdout.write(
            f"Closed binary study {report.study.name!r}: {report.clips} clip(s), {report.annotators} annotator(s), "
            f"{report.annotations} annotation(s); {len(report.rejected)} annotator(s) left out by the filters."
        )
        for annotator, reasons in sorted(report.rejected.items()):
            self.stdout.write(f"  {annotator}: {'; '.join(reasons)}")
        if report.made:
            self.stdout.write(f"Label set {report.made} ({report.made.lifecycle}): {report.made.provenance}.")
        self._skipped([problem.as_dict() for problem in report.skipped])
