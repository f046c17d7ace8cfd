"""The agreement report of a study, as plain data. Pure: takes a StudyData, returns dicts and lists.

Order of work:
1-3. the annotations used, by evaluation.stats.selection (the rule label sets share): annotator
   quality and flags, without the flagged annotators when asked, every clip subsampled to
   exactly N annotations with the seed (short clips listed, left out);
4. agreement, emphasis statistics and intervals, pooled and per language, variety and emotion.
Mismatch reports count every annotation in scope (they describe the clips, not the annotators).

Everything comes out in a fixed order; evaluation.reports.agreement_format turns it into bytes.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from evaluation.stats.alpha import METRICS, alpha_cluster_statistics, alpha_from_sums, alpha_layout, alpha_result
from evaluation.stats.cohen import WEIGHTING, average_pairwise_kappa, clip_pair_tables
from evaluation.stats.emphasis import emphasis_rates, histogram_edges, mismatch_summary, scalar_histogram
from evaluation.stats.fleiss import fleiss_cluster_statistics, fleiss_from_sums, fleiss_kappa, fleiss_layout
from evaluation.stats.quality import FLAG_DESCRIPTIONS, Thresholds
from evaluation.stats.ratings import binary_counts
from evaluation.stats.resampling import METHOD as BOOTSTRAP_METHOD
from evaluation.stats.resampling import bootstrap_sums, cluster_codes, percentile_interval
from evaluation.stats.selection import select_annotations
from evaluation.stats.study_data import DIMENSIONS, StudyData

FORMAT = "emphasis-agreement-report/1"
CONFIDENCE = 0.95
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


def report_compute(data: StudyData, parameters: ReportParameters, *, progress: Progress | None = None) -> dict:
    groups = _groups(data)
    tick = _ticker(progress, total=2 + len(groups))
    selection = select_annotations(
        data, thresholds=parameters.thresholds, exclude_flagged=parameters.exclude_flagged,
        n=parameters.subsample, seed=parameters.seed, step=tick,
    )  # fmt: skip
    quality, flagged, excluded = selection.quality, selection.flagged, selection.excluded
    in_scope, kept, short = selection.in_scope, selection.kept, selection.short
    ratings = data.ratings(kept)
    counts, unit_clip = ratings.unit_counts()
    tables = clip_pair_tables(ratings)
    used_clips = np.bincount(ratings.clip, minlength=ratings.n_clips) > 0
    agreement, emphasis, histograms = {}, {}, {}
    for dimension, value, members in groups:
        tick(f"agreement: {dimension}" + (f" {value or '(none)'}" if value is not None else ""))
        clips = members & used_clips  # a group without usable clips is reported, all undefined
        units = clips[unit_clip]
        label = dimension if value is None else f"{dimension}:{value}"
        result = _agreement(ratings, tables, counts[units], unit_clip[units], clips, label, parameters)
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
            "flagged": [data.annotator_keys[i] for i in flagged],
            "excluded": [data.annotator_keys[i] for i in excluded],
            "rows": [_quality_row(row) for row in quality],
        },
    }


def _quality_row(row) -> dict:
    names = (
        "annotator", "clips", "words", "marked_share", "kappa", "kappa_reason", "kappa_words",
        "checks_passed", "checks_total", "attention_share", "median_seconds",
    )  # fmt: skip
    return {name: getattr(row, name) for name in names} | {"flags": list(row.flags)}


def _groups(data: StudyData) -> list[tuple[str, str | None, np.ndarray]]:
    everything = np.ones(len(data.clip_keys), dtype=bool)
    groups = [("pooled", None, everything)]
    for dimension in DIMENSIONS:
        values = np.asarray(data.clip_groups[dimension], dtype=object)
        for value in sorted(set(values.tolist())):
            groups.append((dimension, value, values == value))
    return groups


def _agreement(ratings, tables, counts, unit_clip, clips, label, parameters) -> dict:
    binary = binary_counts(counts)
    rated = counts.sum(axis=1) > 0
    counts, binary, unit_clip = counts[rated], binary[rated], unit_clip[rated]
    codes, n_clusters = cluster_codes(unit_clip)
    fleiss = fleiss_kappa(binary, unit_clip, confidence=CONFIDENCE)
    f_layout, a_layout = fleiss_layout(binary), alpha_layout(counts)
    alpha_per_clip = alpha_cluster_statistics(counts, codes, n_clusters, a_layout)
    alpha_totals = alpha_per_clip.sum(axis=0)
    alphas = {metric: alpha_result(counts, alpha_totals, a_layout, metric) for metric in METRICS}
    per_clip = np.hstack([fleiss_cluster_statistics(binary, codes, n_clusters, f_layout), alpha_per_clip])
    sums = bootstrap_sums(per_clip, resamples=parameters.resamples, seed=parameters.seed, label=label)
    fleiss_boot = fleiss_from_sums(sums[:, : f_layout.width], f_layout)[0]
    cohen = average_pairwise_kappa(tables, clips)
    rows = clips[ratings.clip]
    return {
        "clips": n_clusters,
        "words": int(counts.shape[0]),
        "annotations": int(rows.sum()),
        "annotators": int(np.unique(ratings.annotator[rows]).size),
        "cohen": {
            "value": cohen.value,
            "undefined": cohen.reason or None,
            "weighting": WEIGHTING,
            "pairs": cohen.pairs,
            "pairs_undefined": cohen.pairs_undefined,
            "mean_weighted_by_shared_words": cohen.mean_weighted_by_words,
        },
        "fleiss": {
            "value": fleiss.value,
            "undefined": fleiss.reason or None,
            "pa": fleiss.pa,
            "pe": fleiss.pe,
            "words_with_2_or_more_ratings": fleiss.units_paired,
            "se": fleiss.se,
            "ci95": _pair(fleiss.ci),
            "ci95_undefined": "needs at least two clips" if fleiss.value is not None and fleiss.ci is None else None,
            "se_words_independent": fleiss.se_units,
            "ci95_words_independent": _pair(fleiss.ci_units),
            "bootstrap": _bootstrap(fleiss_boot, fleiss.value, n_clusters),
        },
        "krippendorff": {
            metric: {
                "value": result.value,
                "undefined": result.reason or None,
                "pairable_values": result.pairable_values,
                "bootstrap": _bootstrap(
                    alpha_from_sums(sums[:, f_layout.width :], a_layout, metric), result.value, n_clusters
                ),
            }
            for metric, result in alphas.items()
        },
    }


def _bootstrap(values: np.ndarray, point: float | None, clips: int) -> dict | None:
    """The percentile interval, or None when the measure or the bootstrap is off; a reason when it cannot vary."""
    if point is None or values.size == 0:
        return None
    if clips < 2:
        return {"ci95": None, "se": None, "undefined_resamples": 0,
                "undefined": "one clip only: resampling clips cannot vary"}  # fmt: skip
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
        "cohen": "average pairwise Cohen's kappa on the binary collapse: "
        + WEIGHTING
        + "; each pair on the words both labelled; pairs whose kappa is 0/0 are counted and left out",
        "fleiss": "Fleiss' kappa on the binary collapse, generalized to any number of raters per word "
        "(Gwet 2014; irrCAC fleiss.kappa.raw). se: Gwet's linearized (non-null) variance with clips as "
        "clusters; ci95: kappa -/+ t(0.975, clips - 1) se. se_words_independent, ci95_words_independent: "
        "the same variance treating words as independent (irrCAC's, t with words - 1 df), which is too "
        "narrow when words of a clip share annotators",
        "krippendorff": "Krippendorff's alpha on levels 0, 1, 2 with the nominal, ordinal (Krippendorff's "
        "rank metric) and interval (squared difference of levels) metrics",
        "bootstrap": f"{BOOTSTRAP_METHOD}; {parameters.resamples} resamples; seed {parameters.seed}; "
        "numpy PCG64 seeded with [seed, crc32(group label)]; 95 % percentile interval, linear interpolation",
        "undefined": "a measure that is undefined for the data is null, with the reason in 'undefined'",
        "annotator_quality": "computed on every annotation in scope before subsampling; kappa against the "
        "leave-one-out majority of the other annotators of the same clips",
    }


def _ticker(progress: Progress | None, *, total: int):
    state = {"done": 0}

    def tick(phase: str) -> None:
        if progress is not None:
            progress(phase, state["done"], total)
        state["done"] += 1

    return tick
