"""Plan an emphasis study: 3 to 15 annotators a clip, fixed, with exact stopping and with
probabilistic stopping (--epsilon, --minimum), from a pilot (the study's annotations so far) or from
assumptions; prints the table (with each design's share of labels that differ from the fixed
design's) and the recommendation."""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from evaluation.services.study_designs import DEFAULT_REPLICATES, SOURCES, DesignRefused, study_design_compute
from evaluation.stats.study_designer import ProbabilisticStopping

PROBABILISTIC = ProbabilisticStopping()

ASSUMED = ("emphasis_rate", "accuracy", "spammers", "heterogeneity", "heavy_share", "seconds_per_audio_second")


class Command(BaseCommand):
    help = "Plan an emphasis study: interval widths, label stability and cost for 3 to 15 annotators a clip."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug (its clips, and with --source pilot its annotations)")
        parser.add_argument("--source", choices=SOURCES, default="assumptions")
        for name in ASSUMED:
            parser.add_argument(f"--{name.replace('_', '-')}", type=float, help="replaces the default or the pilot's")
        parser.add_argument("--hourly-rate", type=float, default=15.0)
        parser.add_argument("--kappa-width", type=float, default=0.1, help="widest 95 %% interval of kappa")
        parser.add_argument("--flip-share", type=float, default=0.02, help="most labels one more listener may flip")
        parser.add_argument(
            "--epsilon",
            type=float,
            default=PROBABILISTIC.epsilon,
            help="probabilistic stopping: stop when every word's chance of another label is below this",
        )
        parser.add_argument(
            "--minimum",
            type=int,
            default=PROBABILISTIC.minimum,
            help="probabilistic stopping: fewest annotations a clip gets before it may stop",
        )
        parser.add_argument("--replicates", type=int, default=DEFAULT_REPLICATES)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--json", action="store_true", help="print the design as JSON")

    def handle(self, *args, **options):
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        given = {name: options[name] for name in ASSUMED if options[name] is not None}
        try:
            design = study_design_compute(
                study=study,
                source=options["source"],
                assumptions={**given, "hourly_rate": options["hourly_rate"]},
                targets={"kappa_width": options["kappa_width"], "flip_share": options["flip_share"]},
                probabilistic={"epsilon": options["epsilon"], "minimum": options["minimum"]},
                replicates=options["replicates"],
                seed=options["seed"],
            )
        except DesignRefused as refused:
            raise CommandError(str(refused)) from None
        if options["json"]:
            self.stdout.write(json.dumps(design.as_dict(), indent=2))
            return
        rule = design.probabilistic
        self.stdout.write(f"probabilistic stopping: epsilon {rule.epsilon}, at least {rule.minimum} annotations a clip")
        self.stdout.write(
            f"{'N':>3} {'mode':<13} {'kappa':>6} {'width':>15} {'alpha':>6} {'width':>15} {'flipped':>15} "
            f"{'differing':>15} {'per clip':>8} {'hours':>8} {'cost':>9} meets"
        )
        for row in design.rows:
            self.stdout.write(
                f"{row.annotators:>3} {row.mode:<13} {row.kappa:6.3f} {row.kappa_width:7.4f} ± {row.kappa_width_se:.4f} "
                f"{row.alpha_ordinal:6.3f} {row.alpha_width:7.4f} ± {row.alpha_width_se:.4f} "
                f"{row.flip_share:7.4f} ± {row.flip_share_se:.4f} "
                f"{row.differing_share:7.4f} ± {row.differing_share_se:.4f} {row.annotations_per_clip:8.2f} "
                f"{row.participant_hours:8.1f} {row.cost:9.0f} "
                + ("cannot tell" if not (row.can_tell and row.kappa_can_tell) else "yes" if row.meets_targets else "no")
            )
        for figure in design.check.get("checked", []):
            self.stdout.write(
                f"check at {figure['n']} listeners a clip: the pilot flips {figure['pilot']:.4f} ± "
                f"{figure['pilot_se']:.4f}, the designer's crowd {figure['designer']:.4f}"
            )
        if not design.check.get("can_tell", True):
            self.stdout.write(f"the designer cannot tell: {design.check['reason']}")
        if design.check.get("kappa_untold"):
            self.stdout.write(f"kappa widths: {design.check['kappa_reason']}")
        best = design.recommendation
        saving = best["saving_against_10_fixed"]
        self.stdout.write(
            f"recommended: {best['annotators']} annotators a clip, {best['mode']}: {best['participant_hours']:.1f} "
            f"participant-hours, cost {best['cost']:.0f} ({best['reason']})"
            + (f"; {saving:.0%} fewer hours than 10 a clip, fixed" if saving is not None else "")
        )
