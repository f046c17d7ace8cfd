from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from annotation.services.topups import Shortfall, topup_open, topup_plan, topup_summary

COLUMNS = ("language", "clips below target", "missing annotations", "places needed")


class Command(BaseCommand):
    help = (
        "Show the clips of a study below their target, by language, and the places that would fill them; "
        "with --open, raise the study's places by the places still needed."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="The study's slug (as in its participant link /s/<slug>/).")
        parser.add_argument(
            "--open",
            action="store_true",
            dest="open_places",
            help="Open the places needed (expiring overdue tasks first).",
        )

    def handle(self, *args, slug: str, open_places: bool, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        if open_places:
            opened = topup_open(study=study)
            plan = opened.plan
            if opened.expired_tasks:
                self.stdout.write(f"Expired {opened.expired_tasks} overdue task(s) first.")
        else:
            opened, plan = None, topup_plan(study=study)
        self._table([*plan.languages, plan.total])
        if plan.overdue_tasks and not open_places:
            self.stdout.write(
                f"{plan.overdue_tasks} overdue task(s) still hold clips; --open (or expire_tasks) releases them."
            )
        self.stdout.write(f"{study.slug}: {topup_summary(plan, opened)}")

    def _table(self, rows: list[Shortfall]) -> None:
        cells = [COLUMNS] + [
            (
                row.language or "(none)",
                str(row.clips_below_target),
                str(row.missing_annotations),
                str(row.places_needed),
            )
            for row in rows
        ]
        widths = [max(len(line[column]) for line in cells) for column in range(len(COLUMNS))]
        for line in cells:
            self.stdout.write(
                "  ".join(
                    cell.rjust(width) if column else cell.ljust(width)
                    for column, (cell, width) in enumerate(zip(line, widths))
                ).rstrip()
            )
