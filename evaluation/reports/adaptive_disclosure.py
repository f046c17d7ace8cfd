"""What an agreement report says of an adaptive design (researcher's guide, "Adaptive designs").
Pure numpy, no Django.

An adaptive design stops a clip early once its listeners agree, so the clips that reach the target
are the ones listeners disagreed on: agreement over the whole set and over the clips annotated to
the target measure different things. The report gives both, point estimates of Fleiss' kappa on
the binary collapse and Krippendorff's ordinal alpha on the three levels, each clip with all of its
annotations, beside how many clips stopped early, reached the target or went past it.
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


def adaptive_disclosure(data: StudyData, *, mode: str, target: int, settings: dict) -> dict:
    """The report's "adaptive_design" section: the design, clips by annotations, agreement on all
    clips and on the clips annotated to `target`."""
    ratings = data.ratings()
    counts, unit_clip = ratings.unit_counts()
    per_clip = np.bincount(ratings.clip, minlength=ratings.n_clips)
    annotated = per_clip > 0
    at_target = per_clip >= target
    return {
        "mode": mode,
        "design": MODES[mode],
        "target": target,
        "settings": settings,
        "clips": {
            "stopped_early": int((annotated & ~at_target).sum()),
            "at_target": int((per_clip == target).sum()),
            "past_target": int((per_clip > target).sum()),
        },
        "annotations": int(per_clip.sum()),
        "fixed_design_annotations": int(target * annotated.sum()),
        "agreement": {
            "all_clips": _agreement(counts[annotated[unit_clip]]),
            "clips_annotated_to_target": _agreement(counts[at_target[unit_clip]]),
        },
    }


def _agreement(counts: np.ndarray) -> dict:
    kappa, ordinal = fleiss_kappa(binary_counts(counts)), alpha(counts, "ordinal")
    return {
        "words": int(counts.shape[0]),
        "fleiss_kappa": kappa.value,
        "fleiss_kappa_undefined": kappa.reason,
        "ordinal_alpha": ordinal.value,
        "ordinal_alpha_undefined": ordinal.reason,
    }
