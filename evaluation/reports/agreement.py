"""The agreement report of a study, as plain data. Pure: takes a StudyData, returns dicts and lists.

Order of work:
1-3. the annotations used, by evaluation.stats.selection (the rule label sets share): annotator
   quality and flags, without the flagged annotators when asked, every clip subsampled to
   exactly N annotations with the seed (short clips listed, left out);
4. agreement, emphasis statistics and intervals, pooled and per language, variety and emotion;
5. the drill-down (evaluation.reports.drilldown): per clip, word position, word and annotator pair.
Mismatch reports count every annotation in scope (they describe the clips, not the annotators).

Everything comes out in a fixed order; evaluation.reports.agreement_format turns it into bytes.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from evaluation.reports.drilldown import drilldown_compute
from evaluation.stats.alpha import METRICS, alpha_cluster_statistics, alpha_from_sums, alpha_layout, alpha_result
from evaluation.stats.cohen import WEIGHTING, average_pairwise_kappas, clip_pair_tables
from evaluation.stats.emphasis import emphasis_rates, histogram_edges, mismatch_summary, scalar_histogram
from evaluation.stats.fleiss import fleiss_cluster_statistics, fleiss_from_sums, fleiss_kappa, fleiss_layout
from evaluation.stats.gwet import gwet_ac, gwet_cluster_statistics, gwet_from_sums, gwet_layout
from evaluation.stats.intervals import MIN_UNITS, too_few
from evaluation.stats.kappa import WEIGHTINGS
from evaluation.stats.light_bootstrap import clip_pair_statistics, light_kappa_resampled
from evaluation.stats.quality import FLAG_DESCRIPTIONS, Thresholds
from evaluation.stats.ratings import binary_counts
from evaluation.stats.resampling import METHOD as BOOTSTRAP_METHOD
from evaluation.stats.resampling import bootstrap_sums, cluster_codes, percentile_interval
from evaluation.stats.selection import Selection, select_annotations
from evaluation.stats.study_data import DIMENSIONS, StudyData

FORMAT = "emphasis-agreement-report/1"
CONFIDENCE = 0.95
# The groups whose Light's kappa gets a clip-bootstrap interval (see _methods).
LIGHT_INTERVAL_DIMENSIONS = ("pooled", "language")
AC2_WEIGHTING = "quadratic"
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ReportParameters:
    subsample: int | None = 10  # annotations per clip; None keeps every annotation
    seed: int = 0
    resamples: int = 1000
    exclude_flagged: bool = False
    thresholds: Thresholds = field(default_factory=Thresholds)
    mismatch_threshold: int = 2
    language: str | None = None  # the scope the data was restricted to; None for the whole study

    def __post_init__(self):
        if self.subsample is not None and self.subsample < 2:
            raise ValueError("subsample must be at least 2 annotations per clip (or None for all)")
        if self.seed < 0 or self.resamples < 0:
            raise ValueError("seed and resamples cannot be negative")

    def as_dict(self) -> dict:
        return {**asdict(self), "thresholds": self.thresholds.as_dict()}


def report_compute(
    data: StudyData,
    parameters: ReportParameters,
    *,
    progress: Progress | None = None,
    selection: Selection | None = None,
    annotator_name: Callable[[str], str] = str,
) -> dict:
    """The report; `selection` gives the annotations when the caller has already chosen them with
    these parameters (a label set's build), so annotator quality is not computed twice.
    `annotator_name` turns an annotator key into the name the report shows (the database's callers:
    the opaque annotator id), so that the keys, which order annotators and seed the subsample, stay
    inside the computation."""
    groups = _groups(data)
    tick = _ticker(progress, total=3 + len(groups))
    if selection is None:
        selection = select_annotations(
            data,
            thresholds=parameters.thresholds,
            exclude_flagged=parameters.exclude_flagged,
            n=parameters.subsample,
            seed=parameters.seed,
            step=tick,
        )
    else:
        tick("annotator quality")
        tick("subsampling")
    quality, flagged, excluded = selection.quality, selection.flagged, selection.excluded
    in_scope, kept, short = selection.in_scope, selection.kept, selection.short
    ratings = data.ratings(kept)
    counts, unit_clip = ratings.unit_counts()
    tables = clip_pair_tables(ratings)
    used_clips = np.bincount(ratings.clip, minlength=ratings.n_clips) > 0
    # "pooled" -> its figures, every other dimension -> {value: figures}
    agreement: dict[str, Any] = {}
    emphasis: dict[str, Any] = {}
    histograms: dict[str, Any] = {}
    for dimension, value, members in groups:
        tick(f"agreement: {dimension}" + (f" {value or '(none)'}" if value is not None else ""))
        clips = members & used_clips  # a group without usable clips is reported, all undefined
        units = clips[unit_clip]
        result = agreement_measures(
            ratings,
            tables,
            counts[units],
            unit_clip[units],
            clips,
            parameters,
            light_interval=dimension in LIGHT_INTERVAL_DIMENSIONS,
        )
        rates = emphasis_rates(counts[units])
        if dimension == "pooled":
            agreement["pooled"], emphasis["pooled"] = result, rates
            histograms["pooled"] = scalar_histogram(counts[units])
            continue
        agreement.setdefault(dimension, {})[value] = result
        emphasis.setdefault(dimension, {})[value] = rates
        if dimension == "language":
            histograms.setdefault("language", {})[value] = scalar_histogram(counts[units])
    reports = np.bincount(data.clip, weights=data.mismatch, minlength=len(data.clip_keys)).astype(np.int64)
    annotated = np.bincount(data.clip, minlength=len(data.clip_keys)) > 0
    tick("drilldown")
    drilldown = drilldown_compute(data, ratings, counts, unit_clip, tables, reports, annotator_name=annotator_name)
    return {
        "format": FORMAT,
        "study": data.study,
        "scope": {"language": parameters.language},
        "parameters": parameters.as_dict(),
        "methods": _methods(parameters),
        "data": _data_summary(data, in_scope, kept, short, used_clips, counts),
        "clips_short": [{"clip": key, "annotations": n} for key, n in short],
        "agreement": agreement,
        "emphasis": {
            **emphasis,
            "scalar_histogram": {"edges": histogram_edges(), **histograms},
            "mismatch": mismatch_summary(
                reports[annotated],
                [k for k, a in zip(data.clip_keys, annotated) if a],
                threshold=parameters.mismatch_threshold,
            ),
        },
        "annotators": {
            "flag_descriptions": FLAG_DESCRIPTIONS,
            "flagged": [annotator_name(data.annotator_keys[i]) for i in flagged],
            "excluded": [annotator_name(data.annotator_keys[i]) for i in excluded],
            "rows": [_quality_row(row) | {"annotator": annotator_name(row.annotator)} for row in quality],
        },
        "drilldown": drilldown,
    }


def _quality_row(row) -> dict:
    names = (
        "annotator",
        "clips",
        "words",
        "marked_share",
        "kappa",
        "kappa_reason",
        "kappa_words",
        "checks_passed",
        "checks_total",
        "attention_share",
        "median_seconds",
        "median_time_ratio",
    )
    return {name: getattr(row, name) for name in names} | {"flags": list(row.flags)}


def _groups(data: StudyData) -> list[tuple[str, str | None, np.ndarray]]:
    everything = np.ones(len(data.clip_keys), dtype=bool)
    groups: list[tuple[str, str | None, np.ndarray]] = [("pooled", None, everything)]
    for dimension in DIMENSIONS:
        values = np.asarray(data.clip_groups[dimension], dtype=object)
        for value in sorted(set(values.tolist())):
            groups.append((dimension, value, values == value))
    return groups


def agreement_measures(ratings, tables, counts, unit_clip, clips, parameters, *, light_interval: bool) -> dict:
    """Every agreement measure of one group of clips (`clips`, bool per clip) of `ratings`, whose
    word counts and pair tables are `counts`, `unit_clip` and `tables`."""
    binary = binary_counts(counts)
    rated = counts.sum(axis=1) > 0
    counts, binary, unit_clip = counts[rated], binary[rated], unit_clip[rated]
    codes, n_clusters = cluster_codes(unit_clip)
    layout_fleiss, layout_ac1, layout_ac2 = (
        fleiss_layout(binary),
        gwet_layout(binary),
        gwet_layout(counts, AC2_WEIGHTING),
    )
    layout_alpha = alpha_layout(counts)
    per_clip = {
        "fleiss": fleiss_cluster_statistics(binary, codes, n_clusters, layout_fleiss),
        "ac1": gwet_cluster_statistics(binary, codes, n_clusters, layout_ac1),
        "ac2": gwet_cluster_statistics(counts, codes, n_clusters, layout_ac2),
        "alpha": alpha_cluster_statistics(counts, codes, n_clusters, layout_alpha),
    }
    sums = _split(
        bootstrap_sums(np.hstack(list(per_clip.values())), resamples=parameters.resamples, seed=parameters.seed),
        per_clip,
    )
    alpha_totals = per_clip["alpha"].sum(axis=0)
    alphas = {metric: alpha_result(counts, alpha_totals, layout_alpha, metric) for metric in METRICS}
    cohen = average_pairwise_kappas(tables, clips, (None, *WEIGHTINGS))
    light = (
        light_kappa_resampled(
            clip_pair_statistics(tables, np.unique(unit_clip)), resamples=parameters.resamples, seed=parameters.seed
        )
        if light_interval
        else np.empty(0)
    )
    rows = clips[ratings.clip]
    return {
        "clips": n_clusters,
        "words": int(counts.shape[0]),
        "annotations": int(rows.sum()),
        "annotators": int(np.unique(ratings.annotator[rows]).size),
        "cohen": {
            **_cohen(cohen[None]),
            "bootstrap": _bootstrap(light, cohen[None].value, n_clusters),
            "weighting": WEIGHTING,
            "levels": {weighting: _cohen(cohen[weighting]) for weighting in WEIGHTINGS},
        },
        "fleiss": _linearized(
            fleiss_kappa(binary, unit_clip, confidence=CONFIDENCE),
            fleiss_from_sums(sums["fleiss"], layout_fleiss)[0],
            n_clusters,
        ),
        "gwet": {
            "ac1": _linearized(
                gwet_ac(binary, unit_clip, confidence=CONFIDENCE),
                gwet_from_sums(sums["ac1"], layout_ac1)[0],
                n_clusters,
            ),
            f"ac2_{AC2_WEIGHTING}": _linearized(
                gwet_ac(counts, unit_clip, weighting=AC2_WEIGHTING, confidence=CONFIDENCE),
                gwet_from_sums(sums["ac2"], layout_ac2)[0],
                n_clusters,
            ),
        },
        "krippendorff": {
            metric: _alpha(result, alpha_from_sums(sums["alpha"], layout_alpha, metric), n_clusters)
            for metric, result in alphas.items()
        },
    }


def _alpha(result, resampled: np.ndarray, clips: int) -> dict:
    return {
        "value": result.value,
        "undefined": result.reason or None,
        "pairable_values": result.pairable_values,
        "bootstrap": _bootstrap(resampled, result.value, clips),
    }


def _split(sums: np.ndarray, blocks: dict) -> dict:
    """The bootstrap sums of each block of per-clip statistics, by name."""
    out, start = {}, 0
    for name, block in blocks.items():
        out[name] = sums[:, start : start + block.shape[1]]
        start += block.shape[1]
    return out


def _cohen(result) -> dict:
    return {
        "value": result.value,
        "undefined": result.reason or None,
        "pairs": result.pairs,
        "pairs_undefined": result.pairs_undefined,
        "mean_weighted_by_shared_words": result.mean_weighted_by_words,
    }


def _linearized(result, resampled: np.ndarray, clips: int) -> dict:
    """Fleiss' kappa or a Gwet coefficient: the value, its linearized intervals and the bootstrap."""
    defined = result.value is not None
    return {
        "value": result.value,
        "undefined": result.reason or None,
        "pa": result.pa,
        "pe": result.pe,
        "words_with_2_or_more_ratings": result.units_paired,
        "se": result.se,
        "ci95": _pair(result.ci),
        "ci95_undefined": (result.ci_reason or None) if defined else None,
        "se_words_independent": result.se_units,
        "ci95_words_independent": _pair(result.ci_units),
        "ci95_words_independent_undefined": (result.ci_units_reason or None) if defined else None,
        "bootstrap": _bootstrap(resampled, result.value, clips),
    }


def _bootstrap(values: np.ndarray, point: float | None, clips: int) -> dict | None:
    """The percentile interval, or None when the measure or the bootstrap is off; a reason when too few clips."""
    if point is None or values.size == 0:
        return None
    few = too_few(clips, "clips")
    if few:
        return {"ci95": None, "se": None, "undefined_resamples": 0, "undefined": few}
    interval = percentile_interval(values, confidence=CONFIDENCE)
    return {
        "ci95": None if interval.low is None else [interval.low, interval.high],
        "se": interval.se,
        "undefined_resamples": interval.undefined,
        "undefined": None if interval.low is not None else "fewer than two resamples where the measure is defined",
    }


def _pair(interval) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def _data_summary(data, in_scope, kept, short, used_clips, counts) -> dict:
    return {
        "clips": len(data.clip_keys),
        "clips_annotated": int((np.bincount(data.clip, minlength=len(data.clip_keys)) > 0).sum()),
        "clips_used": int(used_clips.sum()),
        "clips_short": len(short),
        "annotations": data.n_annotations,
        "annotations_of_excluded_annotators": int((~in_scope).sum()),
        "annotations_used": int(kept.sum()),
        "annotators": len(data.annotator_keys),
        "annotators_used": int(np.unique(data.annotator[kept]).size),
        "attention_check_answers": int(data.check_annotator.size),
        "words_used": int((counts.sum(axis=1) > 0).sum()),
        "left_out_by_source": dict(sorted(data.notes.items())),
    }


def _methods(parameters: ReportParameters) -> dict:
    n = parameters.subsample
    return {
        "unit": "the word (clip, word index); every word of every clip used (after subsampling)",
        "subsample": (
            "every annotation used"
            if n is None
            else f"exactly {n} annotations per clip, chosen by a keyed BLAKE2b hash of (seed, clip, annotator); "
            f"clips with fewer than {n} are left out and listed in clips_short"
        ),
        "binary_label": "emphasized when more than half of the clip's annotators gave level 1 or 2",
        "scalar_label": "mean of the scores 0, 0.5, 1 of levels 0, 1, 2",
        "cohen": "Light's kappa (Light 1971): the unweighted mean over annotator pairs of Cohen's kappa "
        "(Cohen 1960), each pair on the words both labelled; pairs whose kappa is 0/0 are counted and left "
        "out. value: on the binary collapse (" + WEIGHTING + "), MMEE's average pairwise Cohen's kappa. "
        "levels: on the three levels 0, 1, 2, unweighted, and linear and quadratic weighted (Cohen 1968; "
        "agreement weights 1 - |i - j| / 2 and 1 - (i - j)^2 / 4). bootstrap: the clip bootstrap of the "
        "binary value (the same resamples as the other measures; a pair is in a resample's mean when one of "
        "its clips is drawn, its table summed over its drawn clips), from per-clip statistics "
        "(evaluation.stats.light_bootstrap), pooled and per language (as MMEE reports it; null per variety "
        "and emotion, where it would double the report's time); the levels have no interval (a pair's kappa "
        "with the Fleiss, Cohen & Everitt (1969) standard error and a bootstrap is evaluation.stats.kappa)",
        "fleiss": "Fleiss' kappa (Fleiss 1971) on the binary collapse, generalized to any number of raters "
        "per word (Gwet 2014; irrCAC fleiss.kappa.raw). se: Gwet's linearized (non-null) variance with clips "
        "as clusters; ci95: kappa -/+ t(0.975, clips - 1) se. se_words_independent, ci95_words_independent: "
        "the same variance treating words as independent (irrCAC's, t with words - 1 df), which is too "
        "narrow when words of a clip share annotators",
        "gwet": "Gwet's agreement coefficients (Gwet 2008, Br. J. Math. Stat. Psychol. 61; Handbook of "
        "Inter-Rater Reliability, 4th ed., 2014; irrCAC gwet.ac1.raw): ac1 on the binary collapse, beside "
        f"Fleiss; ac2_{AC2_WEIGHTING} on the three levels with {AC2_WEIGHTING} weights. Their chance "
        "agreement stays small when nearly every word is not emphasized, where Fleiss' kappa and alpha drop "
        "although annotators agree on nearly every word (the prevalence paradox): read them beside Fleiss, "
        "not instead. se, ci95 and the bootstrap as for Fleiss. Every rating in one category: undefined "
        "(irrCAC answers 1)",
        "krippendorff": "Krippendorff's alpha (Krippendorff 2011, Computing Krippendorff's Alpha-Reliability) "
        "on levels 0, 1, 2 with the nominal, ordinal (Krippendorff's rank metric, from the marginals), "
        "interval (squared difference of levels) and ratio (squared difference over sum: level 0 is the "
        "true zero, 1 and 2 are 1/9 apart) metrics",
        "bootstrap": f"{BOOTSTRAP_METHOD}; {parameters.resamples} resamples; numpy PCG64 seeded with the "
        f"report's seed ({parameters.seed}) alone, so two groups with the same clips get the same interval; "
        "95 % percentile interval, linear interpolation",
        "intervals": f"no interval from fewer than {MIN_UNITS} clips (or, words independent, {MIN_UNITS} "
        "words): the measure is given, its interval is null with the reason",
        "undefined": "a measure that is undefined for the data is null, with the reason in 'undefined'",
        "annotator_quality": "computed on every annotation in scope before subsampling; kappa against the "
        "leave-one-out majority of the other annotators of the same clips; median_time_ratio: the median "
        "over clips of seconds spent over the clip's duration (min_time_ratio flags an annotator below it)",
    }


def _ticker(progress: Progress | None, *, total: int):
    state = {"done": 0}

    def tick(phase: str) -> None:
        if progress is not None:
            progress(phase, state["done"], total)
        state["done"] += 1

    return tick
