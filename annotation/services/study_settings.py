"""Changing a study's settings, screening questions and attention checks in one go (the API's PATCH).

The checks of each value are the model's and the study admin's forms' (annotation/study_forms.py),
which the caller runs first; this writes what passed, atomically: a study is never left with new
settings and its old questions.

Model allocation and the ordinal predictor are refused (DesignUnchecked, a refusal whose problems
name the field) unless the study's design check says they beat the fixed design
(annotation.models.study.unchecked_design_problems; the admin's change form gets the same reasons
through Study.clean).
"""

from django.db import transaction

from annotation.models import AttentionCheck, PrerequisiteQuestion, Study
from annotation.models.study import checked_designs_chosen, unchecked_design_problems
from annotation.refusals import Refused


class DesignUnchecked(Refused, ValueError):
    """A design the study's design check does not say beats the fixed design; `problems` name the fields."""


@transaction.atomic
def study_configure(
    *, study: Study, settings: dict, prerequisites: list[dict] | None = None, attention_checks: list[dict] | None = None
) -> Study:
    """Set `settings` (model field -> value) on the study; a list given replaces the study's
    screening questions ({text, choices, accepted}) or attention checks ({clip, kind, expected})."""
    already = checked_designs_chosen(study)
    for name, value in settings.items():
        setattr(study, name, value)
    # A kind with no adaptive designs is told so by full_clean below, not to run the designer.
    problems = unchecked_design_problems(study, already=already) if study.capabilities.adaptive_designs else []
    if problems:
        raise DesignUnchecked(" ".join(problem.reason for problem in problems), problems=problems)
    if settings:
        study.full_clean()
        study.save(update_fields=list(settings))
    if prerequisites is not None:
        study.prerequisites.all().delete()
        PrerequisiteQuestion.objects.bulk_create(
            PrerequisiteQuestion(study=study, position=position, **question)
            for position, question in enumerate(prerequisites)
        )
    if attention_checks is not None:
        study.attention_checks.all().delete()
        AttentionCheck.objects.bulk_create(AttentionCheck(study=study, **check) for check in attention_checks)
    return study
