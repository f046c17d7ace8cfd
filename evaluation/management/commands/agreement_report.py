"""Print a study's agreement report; optionally write the same JSON the report page offers, and CSV."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from annotation.selectors.study_data import study_thresholds
from evaluation.reports.agreement_format import agreement_groups, report_csv
from evaluation.services.agreement_reports import agreement_report_compute, report_parameters
from evaluation.stats.quality import Thresholds


class Command(BaseCommand):
    help = "Agreement, emphasis statistics and annotator quality of a study (pooled and per group)."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--language", help="only the clips of this language")
        parser.add_argument(
            "--subsample", type=int, help="annotations per clip (default, or 0: every usable annotation)"
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--resamples", type=int, default=1000, help="clip bootstrap resamples (0 = none)")
        parser.add_argument("--exclude-flagged", action="store_true", help="leave out flagged annotators")
        parser.add_argument("--min-kappa", type=float, help="flag kappa below (default: the study's)")
        parser.add_argument("--min-attention", type=float, help="flag attention share below (default: the study's)")
        parser.add_argument(
            "--min-time-ratio",
            type=float,
            help="flag a median time per clip below this multiple of the clip's duration (default: the study's)",
        )
        parser.add_argument("--min-seconds", type=float, help="flag median seconds per clip below (default: off)")
        parser.add_argument("--max-marked-share", type=float, help="flag a share of words marked above this")
        parser.add_argument("--json", type=Path, help="write the report JSON here")
        parser.add_argument("--csv", type=Path, help="write the report as CSV here")

    def handle(self, *args, **options):
        try:
            study = Study.objects.get(slug=options["study"])
        except Study.DoesNotExist:
            raise CommandError(f"no study with slug {options['study']!r}") from None
        if not study.capabilities.answers_are_word_marks:
            raise CommandError(f"{study.slug} is a {study.get_kind_display().lower()} study, not an emphasis study")
        defaults = study_thresholds(study=study)
        thresholds = Thresholds(
            min_kappa=_pick(options["min_kappa"], defaults.min_kappa),
            min_attention=_pick(options["min_attention"], defaults.min_attention),
            min_time_ratio=_pick(options["min_time_ratio"], defaults.min_time_ratio),
            min_median_seconds=options["min_seconds"],
            max_marked_share=options["max_marked_share"],
        )
        subsample = {} if options["subsample"] is None else {"subsample": options["subsample"] or None}
        try:
            parameters = report_parameters(
                study=study,
                language=options["language"],
                seed=options["seed"],
                resamples=options["resamples"],
                exclude_flagged=options["exclude_flagged"],
                thresholds=thresholds,
                **subsample,
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        progress = (
            (lambda phase, done, total: self.stderr.write(f"[{done + 1}/{total}] {phase}"))
            if (options["verbosity"] > 1)
            else None
        )
        text = agreement_report_compute(study=study, parameters=parameters, progress=progress)
        report = json.loads(text)
        if options["json"]:
            options["json"].write_text(text)
        if options["csv"]:
            options["csv"].write_text(report_csv(report))
        self._print(report)

    def _print(self, report: dict) -> None:
        out, data = self.stdout.write, report["data"]
        language = report["scope"]["language"]
        out(f"Study {report['study']}" + (f", language {language}" if language else ""))
        out(
            f"  {data['annotations_used']} of {data['annotations']} annotations used; {data['clips_used']} clips, "
            f"{data['words_used']} words, {data['annotators_used']} annotators; "
            f"{data['clips_short']} clips short"
        )
        out("  " + report["methods"]["bootstrap"])
        out("")
        out(
            f"{'group':<28}{'clips':>7}{'words':>9}{'Cohen':>8}{'Fleiss [95% CI]':>26}{'Gwet AC1 [95% CI]':>26}"
            f"{'alpha ordinal [95% CI]':>28}"
        )
        for dimension, group, result in agreement_groups(report):
            name = "pooled" if dimension == "pooled" else f"{dimension} {group or '(none)'}"
            alpha = result["krippendorff"]["ordinal"]
            boot = (alpha["bootstrap"] or {}).get("ci95")
            fleiss = _with_ci(result["fleiss"]["value"], result["fleiss"]["ci95"])
            ac1 = _with_ci(result["gwet"]["ac1"]["value"], result["gwet"]["ac1"]["ci95"])
            out(
                f"{name[:27]:<28}{result['clips']:>7}{result['words']:>9}{_num(result['cohen']['value']):>8}"
                f"{fleiss:>26}{ac1:>26}{_with_ci(alpha['value'], boot):>28}"
            )
        out("")
        emphasis = report["emphasis"]
        out(f"{'emphasis rate':<28}{'words':>9}{'label':>8}{'marks':>8}{'heavy':>8}{'scalar':>8}")
        rows = [("pooled", emphasis["pooled"])] + [
            (f"{dimension} {group or '(none)'}", rates)
            for dimension in ("language", "emotion")
            for group, rates in sorted(emphasis.get(dimension, {}).items())
        ]
        for name, rates in rows:
            out(
                f"{name[:27]:<28}{rates['words']:>9}"
                + "".join(f"{_num(rates[key]):>8}" for key in ("label_rate", "mark_rate", "heavy_rate", "mean_scalar"))
            )
        mismatch = emphasis["mismatch"]
        out(
            f"mismatch reports: {mismatch['reports']} on {mismatch['clips_with_reports']} clips; "
            f"{mismatch['clips_at_threshold']} clips with {mismatch['threshold']} or more"
        )
        annotators = report["annotators"]
        out(
            f"annotators flagged: {len(annotators['flagged'])}"
            + (
                f" ({', '.join(annotators['flagged'][:20])}{' ...' if len(annotators['flagged']) > 20 else ''})"
                if annotators["flagged"]
                else ""
            )
        )
        if annotators["excluded"]:
            out(f"left out: {len(annotators['excluded'])} flagged annotators")
        pooled = report["agreement"].get("pooled")
        fleiss = pooled["fleiss"] if pooled else {"value": None, "ci95": None}
        alpha = pooled["krippendorff"]["ordinal"] if pooled else {"value": None, "bootstrap": None}
        self.stdout.write(
            self.style.SUCCESS(
                f"{report['study']}: {data['clips_used']} clips, {data['words_used']} words; "
                f"Cohen {_num(pooled['cohen']['value'] if pooled else None)}, "
                f"Fleiss {_with_ci(fleiss['value'], fleiss['ci95'])}, "
                f"alpha ordinal {_with_ci(alpha['value'], (alpha['bootstrap'] or {}).get('ci95'))}, "
                f"emphasis rate {_num(emphasis['pooled']['label_rate'])}, "
                f"{len(annotators['flagged'])} flagged"
            )
        )


def _pick(value, default):
    return default if value is None else value


def _num(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _with_ci(value, interval) -> str:
    if value is None:
        return "undefined"
    return f"{value:.3f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")
