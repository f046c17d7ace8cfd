"""Adaptive designs of emphasis studies: the state a claim reads, kept up to date at submission.

A submission to an adaptive study (Study.adaptive_mode other than fixed) adds its marks to the
clip's per-word counts and decides, under the rule of evaluation.stats.stopping, whether the clip
is settled (needs no more listeners) and what one more listener is worth on it (priority), in the
submission's own transaction with the clip's row locked, so that claims read a flag and a number
instead of recomputing the rule over the annotations. A fixed study never comes here.

The beta prior of probabilistic stopping is refitted to the study's counts when a task completes
(Jeffreys' Beta(1/2, 1/2) until MIN_WORDS_TO_FIT words have two annotations); a clip is judged
under the prior standing at its own submissions. A study whose predictor is the ordinal annotator
model (annotation.services.adaptive_model) judges a clip from its annotations under the model
standing at the submission, once the model has been fitted; reallocation's priorities, and its
confidence past the target, stay the beta-binomial's.
"""

import numpy as np
from django.db import transaction
from django.db.models import Case, Count, F, IntegerField, Sum, Value, When
from django.utils import timezone

from annotation.models import Annotation, Study, StudyItem
from annotation.services.adaptive_model import (
    allocation_clip_priority,
    clips_annotations,
    ordinal_clip_predictive,
    ordinal_model_fitted,
    uses_ordinal_model,
)
from annotation.sql.submission_rows import ClipState
from evaluation.stats.stopping import (
    BetaBinomialPredictive,
    MarkPredictive,
    StoppingRule,
    beta_prior_fit,
    clip_priority,
    clip_settled,
    label_errors,
    rule_without,
)

PROBABILISTIC_MODES = (Study.Adaptive.PROBABILISTIC, Study.Adaptive.REALLOCATE)


def adaptive_rule(study: Study) -> StoppingRule:
    return StoppingRule(
        mode=study.adaptive_mode,
        target=study.target_annotations,
        epsilon=study.adaptive_epsilon,
        minimum=study.adaptive_min_annotators,
        maximum=study.adaptive_max_per_clip,
        scalar_se=study.adaptive_scalar_se,
    )


def adaptive_prior(study: Study) -> BetaBinomialPredictive:
    """The study's fitted prior, or Jeffreys' before the first fit."""
    prior = study.adaptive_prior or {}
    return BetaBinomialPredictive(prior["a"], prior["b"]) if "a" in prior else BetaBinomialPredictive()


def adaptive_record(*, study: Study, study_item_id: int, levels: list[int]) -> StudyItem:
    """Count one accepted annotation into its clip's adaptive state. Call inside the submission's
    transaction, after its counts were written (completed_count includes this annotation)."""
    item = StudyItem.objects.select_for_update().get(pk=study_item_id)
    if uses_ordinal_model(study):
        # The model as stored now, read under the clip's lock: a refit's refresh of this clip's
        # priority (annotation.services.adaptive_model) comes wholly before this write or after it.
        study.adaptive_model = Study.objects.values_list("adaptive_model", flat=True).get(pk=study.pk)
    marks, heavy = _counts_with(item, levels)
    item.word_marks, item.word_heavy = marks.tolist(), heavy.tolist()
    annotations = clips_annotations([item.pk])[item.pk] if ordinal_model_fitted(study) else None
    item.settled, item.priority = item_state(study, marks, heavy, item.completed_count, annotations)
    item.save(update_fields=["word_marks", "word_heavy", "settled", "priority"])
    return item


def item_state(
    study: Study,
    marks: np.ndarray,
    heavy: np.ndarray,
    seen: int,
    annotations: list[tuple[int, list[int]]] | None = None,
    *,
    excluded: int = 0,
) -> tuple[bool, float]:
    """(settled, priority) of a clip with these counts after `seen` annotations, `excluded` of
    which are left out (the marks count the others: a label set's exclusions,
    evaluation.services.adaptive_disclosures). `annotations` (participant pk, levels), the clip's
    kept ones, are what the ordinal predictor reads; without them, or before the study's model is
    fitted, the beta-binomial predicts the further marks."""
    rule, prior = rule_without(adaptive_rule(study), excluded), adaptive_prior(study)
    kept = seen - excluded
    if study.adaptive_mode == Study.Adaptive.ALLOCATE:
        return _allocation_state(study, marks, seen, kept, annotations, prior)
    priority = clip_priority(marks, kept, prior)
    if study.adaptive_mode == Study.Adaptive.REALLOCATE and kept >= rule.target:
        # Past the target only the most contested clips listen on (the claim orders them by
        # priority), until the maximum or until every word's label is as sure as epsilon asks.
        confident = bool(np.all(label_errors(marks, kept, prior) < rule.epsilon))
        return seen >= study.adaptive_max_per_clip or confident, priority
    predictive: MarkPredictive = prior
    if annotations and ordinal_model_fitted(study):
        predictive = ordinal_clip_predictive(study, annotations)
    return clip_settled(rule, marks, heavy, kept, predictive), priority


def _allocation_state(study, marks, seen, kept, annotations, prior) -> tuple[bool, float]:
    """Model allocation: a clip listens on until the maximum, the claim choosing by priority; the
    ordinal model's once it is fitted, the beta-binomial's until then. The first fit is asked for
    once the study holds MIN_ANNOTATIONS_TO_FIT annotations, so claims past the minimum read the
    beta-binomial's priorities only while that fit is running, or when the study's clips at their
    minimum hold fewer, or when the fit found nothing to learn (no word marked)."""
    if annotations and ordinal_model_fitted(study):
        priority = allocation_clip_priority(study, annotations)
    else:
        priority = clip_priority(marks, kept, prior)
    return seen >= study.adaptive_max_per_clip, priority


def _counts_with(item: StudyItem, levels: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The clip's counts with this annotation. A clip without counts that already has annotations
    (the study became adaptive while live) gets them from its stored annotations, this one included."""
    if not item.word_marks and item.completed_count > 1:
        rows = list(Annotation.objects.filter(item__study_item_id=item.pk).values_list("levels", flat=True))
        stacked = np.array([row for row in rows if len(row) == len(levels)] or [levels])
        return (stacked >= 1).sum(axis=0), (stacked == 2).sum(axis=0)
    return _added(item.word_marks, item.word_heavy, levels)


def _added(word_marks: list, word_heavy: list, levels: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """A clip's per-word counts of marks and of heavy marks with one more annotation's levels."""
    given = np.asarray(levels)
    marks = np.asarray(word_marks or np.zeros(given.size, dtype=int)) + (given >= 1)
    heavy = np.asarray(word_heavy or np.zeros(given.size, dtype=int)) + (given == 2)
    return marks.astype(int), heavy.astype(int)


def adaptive_prior_refit(*, study_id: int) -> dict | None:
    """The new prior, or None when there was nothing to refit. Fit the beta prior of probabilistic stopping to the study's mark counts (a task's completion
    calls it). The fit goes by the distinct (marks, annotations) pairs, so it costs little."""
    study = Study.objects.get(pk=study_id)
    if study.adaptive_mode not in PROBABILISTIC_MODES:
        return None
    marks, seen = [], []
    for word_marks, completed in StudyItem.objects.filter(study_id=study_id, completed_count__gte=2).values_list(
        "word_marks", "completed_count"
    ):
        marks.extend(word_marks)
        seen.extend([completed] * len(word_marks))
    prior = beta_prior_fit(np.array(marks, dtype=int), np.array(seen, dtype=int))
    if prior is None:  # too few words yet: the prior in use stands
        return None
    fitted = {"a": prior.a, "b": prior.b, "words": len(marks), "fitted_at": timezone.now().isoformat()}
    Study.objects.filter(pk=study_id).update(adaptive_prior=fitted)
    return fitted


def reallocation_budget_left(study: Study) -> int:
    """Annotations a reallocating study may still hand out past the target: the fixed design's
    budget (target times its assignable clips) less what each clip holds (completed or reserved)
    or, for a clip still short of the target and not settled, the target it may yet need. Counting
    that need keeps a claim that is filling such clips at the same moment inside the budget; only
    a settled clip's unused share is saved. Read under the study's row lock."""
    target = study.target_annotations
    assignable = StudyItem.objects.filter(
        study=study, review__in=[StudyItem.Review.ACTIVE, StudyItem.Review.CLEARED], form_item__isnull=True
    ).annotate(load=F("completed_count") + F("reserved_count"))
    committed = Case(
        When(settled=False, load__lt=target, then=Value(target)), default=F("load"), output_field=IntegerField()
    )
    totals = assignable.aggregate(clips=Count("pk"), committed=Sum(committed))
    return target * totals["clips"] - (totals["committed"] or 0)


def allocation_budget_left(study: Study) -> int:
    """Annotations a model-allocating study may still hand out by priority: the fixed design's
    budget less what each clip holds (completed or reserved), a clip below the minimum counted at
    the minimum that it is owed first. Read under the study's row lock."""
    minimum = study.adaptive_min_annotators
    assignable = StudyItem.objects.filter(
        study=study, review__in=[StudyItem.Review.ACTIVE, StudyItem.Review.CLEARED], form_item__isnull=True
    ).annotate(load=F("completed_count") + F("reserved_count"))
    committed = Case(When(load__lt=minimum, then=Value(minimum)), default=F("load"), output_field=IntegerField())
    totals = assignable.aggregate(clips=Count("pk"), committed=Sum(committed))
    return study.target_annotations * totals["clips"] - (totals["committed"] or 0)


def adaptive_submit(store, *, study: Study, study_item_id: int, levels: list[int], counts=None):
    """Store the submission and count it into its clip's state. `store(state)` writes the
    submission and, with a ClipState, the clip's new state, but only if the clip's counts are still
    `counts` (completed_count, word_marks, word_heavy, as read with the item); it returns (the
    annotation's id or None, whether nothing was written because the counts had moved).

    The state is computed before anything is written and goes in the submission's own statement
    (annotation.sql.submission_rows), so the clip's row is locked only for that statement: a
    transaction that held it from the counts' update to the state's write held it while its web
    server thread waited for the GIL between statements, and submissions of the same clip, and
    the threads they held, waited behind it (issue 35: at 1000 participants of an exact-stopping
    study, 8.8 transactions on average sat idle holding their clips' rows). Where that cannot be
    done (a design that reads the ordinal model, which must be read under the clip's lock; a clip
    without counts) or another submission came in between, the submission is stored and counted
    in under the clip's lock in one transaction, as before: never its counts in one transaction
    and its marks in another, which others could read (a completed count that holds an annotation
    the marks and settled flag do not, a state no serial order of the submissions gives) and a
    failure between the two would leave for good."""
    state = _state_after(study, counts, levels)
    if state is not None:
        stored, moved = store(state)
        if not moved:
            return stored
    with transaction.atomic():
        stored, _ = store(None)
        if stored is not None:
            adaptive_record(study=study, study_item_id=study_item_id, levels=levels)
    return stored


def _state_after(study: Study, counts, levels: list[int]) -> ClipState | None:
    """The clip's state once this annotation is counted in, from the counts read with the item;
    None where it must be computed under the clip's lock."""
    if counts is None or uses_ordinal_model(study):
        return None
    completed, word_marks, word_heavy = counts
    if not word_marks and completed > 0:
        return None  # the study became adaptive while live: its counts come from the annotations
    if word_marks and len(word_marks) != len(levels):
        return None
    marks, heavy = _added(word_marks, word_heavy, levels)
    settled, priority = item_state(study, marks, heavy, completed + 1)
    before = (completed, list(word_marks or []), list(word_heavy or []))
    return ClipState(*before, marks.tolist(), heavy.tolist(), bool(settled), float(priority))
