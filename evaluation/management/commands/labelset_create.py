"""Create a label set from emphasis studies and build it in this process (no worker needed)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from evaluation.models import LabelSet
from evaluation.services.label_sets import (
    LabelSetRefused,
    label_set_build,
    label_set_create,
    label_set_default_parameters,
    label_set_finalize,
)
from evaluation.stats.annotator_models import DEFAULT_RESAMPLES, MODELS


class Command(BaseCommand):
    help = "Make a new version of a label set from one or more emphasis studies (defaults: the first study's)."

    def add_arguments(self, parser):
        parser.add_argument("name", help="the label set's name; an existing name gets a new version")
        parser.add_argument("--study", action="append", required=True, help="a study's slug (repeat for several)")
        parser.add_argument(
            "--subsample", type=int, help="annotations per clip (default, or 0: every usable annotation)"
        )
        parser.add_argument("--seed", type=int, default=0, help="the subsample's seed (the agreement report's)")
        parser.add_argument("--split-seed", type=int, default=0)
        parser.add_argument("--proportions", default="0.8,0.1,0.1", help="train,validation,test shares")
        parser.add_argument("--by-speaker", action="store_true", help="keep each speaker's clips in one split")
        parser.add_argument("--exclude-flagged", action="store_true", help="leave out annotators with quality flags")
        parser.add_argument(
            "--exclude-failed-checks", action="store_true", help="leave out annotators who failed an attention check"
        )
        parser.add_argument("--arousal", type=Path, help='JSON file {"high": [...], "low": [...]} (default: MMEE)')
        parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the agreement summary")
        parser.add_argument(
            "--annotator-model",
            choices=MODELS,
            help="also give each word the model's posterior and each annotator's reliability with its SE",
        )
        parser.add_argument(
            "--model-resamples",
            type=int,
            default=DEFAULT_RESAMPLES,
            help="bootstrap resamples for the reliabilities' SE",
        )
        parser.add_argument("--finalize", action="store_true", help="finalize the set once built")

    def handle(self, *args, **options):
        studies = self._studies(options["study"])
        try:
            parameters = label_set_default_parameters(studies=studies, **self._overrides(options))
            label_set = label_set_create(name=options["name"], studies=studies, parameters=parameters, enqueue=False)
        except (ValueError, LabelSetRefused) as error:
            raise CommandError(str(error)) from None
        label_set_build(label_set_id=label_set.pk)
        label_set.refresh_from_db()
        if label_set.status != LabelSet.Status.SUCCEEDED:
            raise CommandError(f"{label_set} was not built: {label_set.error}")
        if options["finalize"]:
            label_set = label_set_finalize(label_set=label_set)
        summary = label_set.summary
        for language, splits in sorted(summary["counts"].items()):
            self.stdout.write(f"  {language or '(none)'}: " + ", ".join(f"{n} {s}" for s, n in sorted(splits.items())))
        self.stdout.write(
            f"label set {label_set} ({label_set.lifecycle}): {summary['clips']} clips, {summary['words']} words, "
            f"{summary['annotations']} annotations" + (f", checksum {label_set.checksum}" if label_set.checksum else "")
        )
        if label_set.annotator_model:
            model = label_set.annotator_model
            self.stdout.write(f"annotator model: {model['description']}, fitted {model['fitted_at']}")

    def _studies(self, slugs: list[str]) -> list[Study]:
        found = {study.slug: study for study in Study.objects.filter(slug__in=slugs)}
        missing = [slug for slug in slugs if slug not in found]
        if missing:
            raise CommandError(f"no study with slug {', '.join(map(repr, missing))}")
        return [found[slug] for slug in dict.fromkeys(slugs)]

    def _overrides(self, options) -> dict:
        overrides = {
            "seed": options["seed"],
            "split_seed": options["split_seed"],
            "split_by_speaker": options["by_speaker"],
            "exclude_flagged": options["exclude_flagged"],
            "exclude_failed_checks": options["exclude_failed_checks"],
            "resamples": options["resamples"],
            "proportions": _proportions(options["proportions"]),
        }
        if options["subsample"] is not None:
            overrides["subsample"] = options["subsample"] or None
        if options["annotator_model"]:
            overrides |= {"annotator_model": options["annotator_model"], "model_resamples": options["model_resamples"]}
        if options["arousal"]:
            try:
                overrides["arousal"] = json.loads(options["arousal"].read_text())
            except (OSError, json.JSONDecodeError) as error:
                raise CommandError(f"{options['arousal']}: {error}") from None
        return overrides


def _proportions(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError:
        raise CommandError(f"--proportions: expected three numbers like 0.8,0.1,0.1, not {text!r}") from None
