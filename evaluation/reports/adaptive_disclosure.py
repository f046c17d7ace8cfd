"""What an agreement report, its CSV and a label set's data card say of an adaptive design
(researcher's guide, "Adaptive designs"). Pure numpy, no Django.

An adaptive design stops a clip early once its listeners agree (exact and probabilistic stopping,
reallocation), or gives more listeners to the clips a model found contested (model allocation, where
no clip stops early), so the clips that reach the target are the ones listeners disagreed on:
agreement over the whole set and over the clips annotated to the target measure different things.
The section gives both, point estimates of Fleiss' kappa on the binary collapse and Krippendorff's
ordinal alpha on the three levels, each clip with all of its annotations, beside how many clips
stopped early, reached the target or went past it; and the size of that selection effect in
numbers (`selection_effect`): kappa over the clips at the target less kappa over all clips, and,
where the study designer could replicate them from the study's own annotations taken as a pilot,
the kappa the fixed design of the same target would have had and the adaptive design's own.
"""

import numpy as np

from evaluation.stats.alpha import alpha
from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.ratings import binary_counts
from evaluation.stats.study_data import StudyData

MODES = {
    "exact": "exact stopping (binary labels as the full design's)",
    "probabilistic": "probabilistic stopping",
    "reallocate": "probabilistic stopping with reallocation to contested clips",
    "allocate": "model allocation (the fixed budget, each listener where the ordinal model expected most)",
}


STOPPING_MODES = ("exact", "probabilistic", "reallocate")  # clips stop early; "allocate" does not


def adaptive_disclosure(
    data: StudyData,
    *,
    mode: str,
    target: int,
    settings: dict,
    rows: np.ndarray | None = None,
    replicated: dict | None = None,
) -> dict:
    """The "adaptive_design" section: the design, clips by annotations, agreement on all clips and on
    the clips annotated to `target`, and the selection effect. `rows`: the annotations to read (all
    of them by default; a label set's kept ones). `replicated`: the study designer's replication of
    the fixed design of `target` listeners and of this one (designer_kappas), or {"undefined": why}."""
    ratings = data.ratings(rows)
    counts, unit_clip = ratings.unit_counts()
    per_clip = np.bincount(ratings.clip, minlength=ratings.n_clips)
    annotated = per_clip > 0
    at_target = per_clip >= target
    agreement = {
        "all_clips": _agreement(counts[annotated[unit_clip]]),
        "clips_annotated_to_target": _agreement(counts[at_target[unit_clip]]),
    }
    return {
        "mode": mode,
        "design": MODES[mode],
        "stops_early": mode in STOPPING_MODES,
        "target": target,
        "settings": settings,
        "clips": {
            "stopped_early": int((annotated & ~at_target).sum()),
            "at_target": int((per_clip == target).sum()),
            "past_target": int((per_clip > target).sum()),
        },
        "annotations": int(per_clip.sum()),
        "fixed_design_annotations": int(target * annotated.sum()),
        "agreement": agreement,
        "selection_effect": selection_effect(agreement, replicated),
    }


def selection_effect(agreement: dict, replicated: dict | None) -> dict:
    """Fleiss' kappa over all clips, over the clips at the target, and their difference; with the
    designer's replication, the fixed design's kappa and the adaptive design's (None where a figure
    is undefined or the designer could not replicate the study)."""
    whole = agreement["all_clips"]["fleiss_kappa"]
    contested = agreement["clips_annotated_to_target"]["fleiss_kappa"]
    replicated = replicated or {"undefined": "the study designer was not asked"}
    fixed = replicated.get("fixed_kappa")
    return {
        "kappa_all_clips": whole,
        "kappa_clips_at_target": contested,
        "kappa_at_target_less_all": None if None in (whole, contested) else contested - whole,
        "kappa_fixed_design_replicated": fixed,
        "kappa_adaptive_design_replicated": replicated.get("adaptive_kappa"),
        "kappa_all_clips_less_fixed_replicated": None if None in (whole, fixed) else whole - fixed,
        "replication": replicated,
    }


def designer_kappas(rows: list[dict], *, target: int, mode: str, replicates: int, simulated_clips: int) -> dict:
    """The designer's rows (evaluation.stats.study_designer.DesignRow as dicts) read for the
    disclosure: the fixed design's kappa at `target` listeners, with its 95 % interval width, and
    the kappa of the study's own design where the designer simulates it (exact or probabilistic
    stopping; not reallocation nor model allocation)."""
    by_mode = {row["mode"]: row for row in rows if row["annotators"] == target}
    if "fixed" not in by_mode:
        return {"undefined": f"the designer gave no fixed design of {target} listeners"}
    fixed = by_mode["fixed"]
    own = by_mode.get(mode)
    return {
        "fixed_kappa": _finite(fixed["kappa"]),
        "fixed_kappa_width": _finite(fixed["kappa_width"]),
        "adaptive_kappa": None if own is None else _finite(own["kappa"]),
        "replicates": replicates,
        "simulated_clips": simulated_clips,
    }


def _finite(value) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def _agreement(counts: np.ndarray) -> dict:
    kappa, ordinal = fleiss_kappa(binary_counts(counts)), alpha(counts, "ordinal")
    return {
        "words": int(counts.shape[0]),
        "fleiss_kappa": kappa.value,
        "fleiss_kappa_undefined": kappa.reason,
        "ordinal_alpha": ordinal.value,
        "ordinal_alpha_undefined": ordinal.reason,
    }
