import csv
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.ingest.errors import ImportRefused, SourceRefused
from annotation.services.corpus_import import corpus_import


class Command(BaseCommand):
    help = (
        "Import a corpus from a folder or .zip holding manifest.jsonl or manifest.csv and audio. "
        "Atomic: if any row is bad nothing is written, unless --skip-invalid."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="Corpus folder or .zip archive.")
        parser.add_argument("--corpus", help="Corpus name (default: the folder or archive name).")
        parser.add_argument(
            "--skip-invalid",
            action="store_true",
            help="Import the good rows and write a report of the bad ones.",
        )
        parser.add_argument("--report", type=Path, help="Where --skip-invalid writes its CSV report.")
        parser.add_argument("--no-progress", action="store_true", help="Do not draw a progress bar.")

    def handle(self, *args, path: Path, corpus, skip_invalid, report, no_progress, **options):
        bars: dict[str, tqdm] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if no_progress:
                return
            bar = bars.get(phase)
            if bar is None:
                bar = bars[phase] = tqdm(total=total, desc=phase, unit="clip", file=self.stderr._out)
            bar.update(done - bar.n)
            if done >= total:
                bar.close()

        try:
            result = corpus_import(path=path, corpus_name=corpus, skip_invalid=skip_invalid, progress=progress)
        except (SourceRefused, ImportRefused) as error:
            raise CommandError(str(error)) from None
        finally:
            for bar in bars.values():
                bar.close()
        self.stdout.write(
            f"Corpus {result.corpus!r} from {result.manifest}: {result.created} clip(s) imported, "
            f"{result.unchanged} already present and unchanged, "
            f"{result.clips_with_warnings} with signal warnings."
        )
        if result.problems:
            path_written = self._write_report(report, result)
            self.stdout.write(
                self.style.WARNING(f"{len(result.problems)} row(s) skipped; the report is in {path_written}")
            )

    def _write_report(self, report: Path | None, result) -> Path:
        if report is None:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            report = Path(settings.DATA_DIR) / "import-reports" / f"{result.corpus}-{stamp}.csv"
        report.parent.mkdir(parents=True, exist_ok=True)
        with open(report, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=["line", "clip_id", "field", "reason"])
            writer.writeheader()
            writer.writerows(problem.as_dict() for problem in result.problems)
        return report
