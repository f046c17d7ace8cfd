"""Finalize (freeze) a built label set: its rows never change afterwards."""

from django.core.management.base import BaseCommand, CommandError

from evaluation.models import LabelSet
from evaluation.services.label_sets import LabelSetRefused, label_set_finalize


class Command(BaseCommand):
    help = "Freeze a label set; records the checksum of its rows and the code version."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--set-version", dest="set_version", type=int, help="default: the newest version")

    def handle(self, *args, **options):
        label_set = label_set_named(options["name"], options["set_version"])
        try:
            label_set = label_set_finalize(label_set=label_set)
        except LabelSetRefused as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"label set {label_set} finalized: checksum {label_set.checksum}, code {label_set.code_version}"
        )


def label_set_named(name: str, version: int | None) -> LabelSet:
    """The set of that name and version (default: the newest), or CommandError naming what is missing."""
    sets = LabelSet.objects.filter(name=name)
    label_set = sets.filter(version=version).first() if version else sets.order_by("-version").first()
    if label_set is None:
        raise CommandError(f"no label set named {name!r}" + (f" with version {version}" if version else ""))
    return label_set
