"""Agreement within groups of annotators, e.g. those who passed the headphone check against those
who said they wore headphones. Pure: takes a StudyData and the report's Selection.

Each group's measures are the report's (evaluation.reports.agreement.agreement_measures), computed
on the group's own annotations in scope, every one of them: the report's subsample of N per clip
is drawn over all annotators, and would leave a group only its share of each clip. "All
annotators" is computed the same way, as the group's yardstick. Beside them, each annotator's
leave-one-out kappa (against the majority of all the others of the same clips, as in the report's
annotator table), averaged over the group with a percentile bootstrap over its annotators.
"""

import numpy as np

from evaluation.reports.agreement import CONFIDENCE, ReportParameters, agreement_measures
from evaluation.stats.cohen import clip_pair_tables
from evaluation.stats.intervals import too_few
from evaluation.stats.resampling import percentile_interval
from evaluation.stats.selection import Selection
from evaluation.stats.study_data import StudyData

GROUP_DIMENSION = "headphone check"


def group_agreement(
    data: StudyData, selection: Selection, parameters: ReportParameters, groups: list[tuple[str, str, list[str]]]
) -> list[dict]:
    """For each (id, label, annotator keys): how many of the group annotated, their agreement, and
    their mean leave-one-out kappa. Groups in the order given."""
    position = {key: index for index, key in enumerate(data.annotator_keys)}
    quality = {row.annotator: row for row in selection.quality}
    out = []
    for group, label, keys in groups:
        members = sorted(position[key] for key in set(keys) if key in position)
        rows = selection.in_scope & np.isin(data.annotator, members)
        ratings = data.ratings(rows)
        counts, unit_clip = ratings.unit_counts()
        used = np.bincount(ratings.clip, minlength=ratings.n_clips) > 0
        units = used[unit_clip]
        measures = agreement_measures(
            ratings, clip_pair_tables(ratings), counts[units], unit_clip[units], used, parameters, light_interval=False
        )
        kappas = [kappa for key in sorted(set(keys)) if key in quality and (kappa := quality[key].kappa) is not None]
        out.append(
            {
                "group": group,
                "label": label,
                "participants": len(set(keys)),
                "agreement": measures,
                "kappa_with_others": _mean_with_interval(kappas, parameters),
            }
        )
    return out


def _mean_with_interval(values: list[float], parameters: ReportParameters) -> dict:
    """The mean, and its percentile bootstrap interval over the annotators (seeded by the report's seed)."""
    if not values:
        return {"mean": None, "annotators": 0, "ci95": None, "undefined": "no annotator of the group has a kappa"}
    array = np.asarray(values, dtype=float)
    few = too_few(array.size, "annotators")
    if few or parameters.resamples == 0:
        return {"mean": float(array.mean()), "annotators": int(array.size), "ci95": None, "undefined": few}
    rng = np.random.default_rng(parameters.seed)
    means = array[rng.integers(0, array.size, size=(parameters.resamples, array.size))].mean(axis=1)
    interval = percentile_interval(means, confidence=CONFIDENCE)
    return {
        "mean": float(array.mean()),
        "annotators": int(array.size),
        "ci95": [interval.low, interval.high],
        "undefined": None,
    }
