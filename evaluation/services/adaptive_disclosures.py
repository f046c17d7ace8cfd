"""The adaptive-design section of an adaptive study's agreement report and of a label set built
from it (evaluation.reports.adaptive_disclosure): the design and its settings, agreement over all
clips and over the clips at the target, and the selection effect, with the study designer's
replication of the fixed design of the same target from the study's own annotations taken as a
pilot (evaluation.services.study_designs), where it can make one.
"""

import dataclasses

from annotation.models import Study, StudyItem
from annotation.services.adaptive import item_state
from annotation.services.adaptive_model import adaptive_model_summary
from evaluation.reports.adaptive_disclosure import STOPPING_MODES, adaptive_disclosure, designer_kappas
from evaluation.services.study_designs import DesignRefused, study_design_compute
from evaluation.stats.study_designer import MODES as DESIGNER_MODES

# Small: the replication runs in every adaptive report's and label set's background job, and one
# target and two designs need no more for a point estimate of kappa (the designer page's defaults
# give the interval widths).
REPLICATES, SIMULATED_CLIPS = 12, 150


def adaptive_settings(study: Study) -> dict:
    return {
        "epsilon": study.adaptive_epsilon,
        "minimum_annotators": study.adaptive_min_annotators,
        "maximum_per_clip": study.adaptive_max_per_clip,
        "scalar_se_bound": study.adaptive_scalar_se,
        "prior": study.adaptive_prior,
        "predictor": study.adaptive_predictor,
        "ordinal_model": adaptive_model_summary(study),
    }


def study_adaptive_disclosure(*, study: Study, data, rows=None) -> dict:
    """The section for `study` (adaptive) on `data` (its StudyData), reading the annotations `rows`
    (a boolean mask; all by default)."""
    return adaptive_disclosure(
        data,
        mode=study.adaptive_mode,
        target=study.target_annotations,
        settings=adaptive_settings(study),
        rows=rows,
        replicated=designer_replication(study),
    )


def designer_replication(study: Study) -> dict:
    """The designer's fixed design of the study's target, and the study's own design where the
    designer simulates it, replicated from the study's annotations; {"undefined": why} otherwise."""
    target, mode = study.target_annotations, study.adaptive_mode
    modes = ("fixed", mode) if mode in DESIGNER_MODES and mode != "fixed" else ("fixed",)
    try:
        design = study_design_compute(
            study=study,
            source="pilot",
            probabilistic={"epsilon": study.adaptive_epsilon, "minimum": study.adaptive_min_annotators},
            replicates=REPLICATES,
            simulated_clips=SIMULATED_CLIPS,
            annotators=(target,),
            modes=modes,
        )
    except DesignRefused as refused:
        return {"undefined": f"the study designer could not replicate the study: {refused}"}
    rows = [dataclasses.asdict(row) for row in design.rows]
    return designer_kappas(
        rows, target=target, mode=mode, replicates=design.replicates, simulated_clips=design.simulated_clips
    )


def clips_not_settled(*, study: Study, data, kept) -> list[dict]:
    """The clips of a stopping design (exact, probabilistic, reallocation) that the study's rule
    does not settle on the annotations `kept` (a label set's), the others its design heard counted
    as excluded: what a set's exclusions (flagged, failed checks) reopen, and the clips still
    listening when it was built. Each as {"clip", "annotations" (heard), "kept"}. The beta-binomial
    judges a probabilistic clip here, also where the study's predictor is the ordinal model."""
    if study.adaptive_mode not in STOPPING_MODES:
        return []
    heard = dict(
        StudyItem.objects.filter(study=study, form_item__isnull=True).values_list(
            "clip__external_id", "completed_count"
        )
    )
    unsettled = []
    for index, key in enumerate(data.clip_keys):
        levels = data.levels[kept & (data.clip == index), : data.clip_words[index]]
        seen = max(heard.get(key, 0), levels.shape[0])
        if seen == 0:
            continue
        marks, heavy = (levels >= 1).sum(axis=0), (levels == 2).sum(axis=0)
        settled, _ = item_state(study, marks, heavy, seen, excluded=seen - levels.shape[0])
        if not settled:
            unsettled.append({"clip": key, "annotations": int(seen), "kept": int(levels.shape[0])})
    return unsettled
