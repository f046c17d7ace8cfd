"""The design check of a study: from its pilot (its own first annotations), does model allocation,
or probabilistic stopping with the ordinal predictor, beat the fixed design at the study's
settings (evaluation.stats.allocation_check)? The verdicts are stored on the study
(Study.design_check): the admin and the API refuse either design unless its verdict says it
beats the fixed design (annotation.models.study.unchecked_design_problems).

A check simulates one replicate under each of the pilot's resamples, fitting the ordinal model
three times in each: a few seconds a resample at the default clips, so it runs only when asked
(the designer page's "Check" button, the API's `check_allocation`). It also fits the model to the
pilot itself and scores its labels against the majority's by a held-out listener
(allocation_check.pilot_model_standing): where they are worse, neither design is offered.
"""

from django.utils import timezone

from annotation.models import Study
from annotation.selectors.study_data import study_data
from evaluation.services.study_designs import DesignRefused, study_design_compute
from evaluation.stats.allocation_check import CheckedDesign, allocation_verdicts, pilot_model_standing
from evaluation.stats.design_check import pilot_resamples

DEFAULT_RESAMPLES = 4
DEFAULT_CHECK_CLIPS = 60


def study_design_check_from_pilot(*, study: Study) -> dict:
    """The check the designer page and the API store: the designer's fit check of the study's pilot
    at its target (no assumptions overridden), then study_design_check at the fixed seed, so that
    asking again about the same pilot and settings gives the same verdict (it cannot be re-rolled)."""
    fixed = study_design_compute(study=study, source="pilot", annotators=(study.target_annotations,), modes=("fixed",))
    return study_design_check(study=study, fit_check=fixed.check)


def study_design_check(
    *,
    study: Study,
    fit_check: dict | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    simulated_clips: int = DEFAULT_CHECK_CLIPS,
    seed: int = 0,
) -> dict:
    """Check model allocation and the ordinal predictor against the fixed design at the study's
    settings, from its pilot; store the verdicts on the study and return them (Study.design_check).
    `fit_check`: the designer's own check of the same pilot (Design.check), whose failure leaves
    every verdict "cannot tell". DesignRefused where the study has no pilot to check from."""
    if not study.capabilities.adaptive_designs:
        raise DesignRefused(f"{study.slug} is a {study.get_kind_display().lower()} study; it has no adaptive designs")
    settings = {
        "target_annotations": study.target_annotations,
        "adaptive_min_annotators": study.adaptive_min_annotators,
        "adaptive_max_per_clip": study.adaptive_max_per_clip,
        "adaptive_epsilon": study.adaptive_epsilon,
    }
    if fit_check is not None and not fit_check.get("checked", True):
        # The designer checked its crowd against nothing (a pilot of fewer than three listeners a
        # clip): no verdict may say a design beats the fixed one on an unchecked fit.
        fit_check = {"can_tell": False, "reason": fit_check.get("reason", "the designer's fit is not checked")}
    data = study_data(study=study)
    if data.n_annotations == 0:
        raise DesignRefused(f"{study.slug} has no annotations yet: run a pilot (the fixed design) first")
    try:
        design = CheckedDesign(
            target=study.target_annotations,
            minimum=study.adaptive_min_annotators,
            maximum=study.adaptive_max_per_clip,
            epsilon=study.adaptive_epsilon,
        )
        drawn = pilot_resamples(
            clip=data.clip,
            annotator=data.annotator,
            levels=data.levels,
            clips=len(data.clip_keys),
            draws=resamples,
            seed=seed,
        )
        # The model's own fit to the pilot: what the simulation, fitted to the pilot's marks, cannot see.
        standing = pilot_model_standing(clip=data.clip, annotator=data.annotator, levels=data.levels)
        verdicts = allocation_verdicts(
            drawn, design=design, fit_check=fit_check, standing=standing, simulated_clips=simulated_clips, seed=seed
        )
    except ValueError as error:
        raise DesignRefused(f"the design check cannot run on the pilot of {study.slug}: {error}") from None
    check = {
        "checked_at": timezone.now().isoformat(),
        "pilot_annotations": int(data.n_annotations),
        "settings": settings,
        "resamples": len(drawn),
        "simulated_clips": simulated_clips,
        "fit_check": (fit_check or {}).get("reason", "not run"),
        "model_standing": standing.as_dict() if standing is not None else None,
        **{name: verdict.as_dict() for name, verdict in verdicts.items()},
    }
    study.design_check = check
    study.save(update_fields=["design_check"])
    return check
