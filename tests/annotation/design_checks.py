"""A study's stored design check (Study.design_check), as evaluation.services.design_checks writes
it, for tests that choose model allocation or the ordinal predictor without running the simulation."""

from annotation.models import Study


def seed_design_check(study: Study, *, beats: bool = True, **settings) -> Study:
    """Store a check at the study's settings (or `settings`) whose verdicts beat the fixed design, or lose to it."""
    verdict = "beats" if beats else "loses"
    reason = "it beats the fixed design beyond the replicates' noise" if beats else "it is worse than the fixed design"
    study.design_check = {
        "checked_at": "2026-12-05T12:00:00+00:00",
        "pilot_annotations": 400,
        "settings": {
            "target_annotations": study.target_annotations,
            "adaptive_min_annotators": study.adaptive_min_annotators,
            "adaptive_max_per_clip": study.adaptive_max_per_clip,
            "adaptive_epsilon": study.adaptive_epsilon,
            **settings,
        },
        "resamples": 4,
        "simulated_clips": 60,
        "fit_check": "the designer's crowd flips the pilot's labels as the pilot does",
        "model_standing": {
            "held_out": 6000,
            "model_agreement": 0.912,
            "majority_agreement": 0.9,
            "difference": 0.012,
            "interval": [0.006, 0.018],
            "verdict": "better",
            "method": "each annotation held out in turn",
        },
        **{
            design: {"design": design, "verdict": verdict, "beats_fixed": beats, "reason": f"Simulated: {reason}."}
            for design in ("allocate", "ordinal")
        },
    }
    Study.objects.filter(pk=study.pk).update(design_check=study.design_check)
    return study
