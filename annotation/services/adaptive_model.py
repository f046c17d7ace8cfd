"""The ordinal annotator model of a study with probabilistic stopping (Study.adaptive_predictor
"ordinal") or in model allocation (Study.adaptive_mode "allocate").

The model (evaluation.stats.ordinal_predictive) foresees the marks of the listeners a clip still
lacks from its annotations so far: their three levels and who gave them, each participant with the
thresholds the model fitted to them. It is refitted to all of the study's annotations in the
background (the Celery task annotation.adaptive_model_refit), requested when a task completes and
only once the study's annotations have grown by REFIT_GROWTH since the last fit, so a study of N
annotations is fitted about log(N) / log(1 + REFIT_GROWTH) times in all and a submission never waits
for a fit. Until the first fit succeeds, the beta-binomial predictive stands in
(annotation.services.adaptive). A participant the fit has not seen (they joined since) is given the
fitted participants' median thresholds.

The fitted model is stored on the study (Study.adaptive_model) as JSON:
{"model": "ordinal", "prior": [...], "mark_chance": [...], "participants": {"<pk>": [t1, log gap,
log sigma]}, "typical": [...], "annotations": n, "fitted_at": ISO time}. A fit replaces the stored
one only if it saw more annotations, so two refits finishing out of order keep the newer; a refit
checks that it is still due before it fits, so requests queued while a fit ran cost a count each.

Model allocation stores beside it "allocation": the fit read on evaluation.stats.allocation's fine
grid (the prominence distribution, which prominences are emphasized, the typical listener's
levels) and "priorities": "pending" until every annotated clip has been given the new model's
priority ("refreshed"); a submission gives its clip the priority of its annotations under the model
standing (both with the clip's row locked: see _priorities_refresh).
"""

import logging

import numpy as np
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from kombu.exceptions import OperationalError

from annotation.models import Annotation, Participant, Study, StudyItem
from annotation.shared.jobs import task_send
from evaluation.stats.allocation import (
    ProminenceModel,
    listeners_model,
    model_clip_priority,
    prominence_model,
    word_log_likelihoods,
)
from evaluation.stats.ordinal_predictive import OrdinalPredictive, OrdinalState, ordinal_state_fit, prominence_posterior

logger = logging.getLogger(__name__)
REFIT_GROWTH = 0.1  # refit once the study holds 10 % more annotations than the model saw
MIN_ANNOTATIONS_TO_FIT = 20
REFRESH_BATCH = 200  # clips a refresh locks at once: claims skip them meanwhile, submissions wait
REFIT_TASK = "annotation.adaptive_model_refit"  # annotation/tasks.py; sent by name, the task is above us
_STOPPING_MODES = (Study.Adaptive.PROBABILISTIC, Study.Adaptive.REALLOCATE)


def uses_ordinal_model(study: Study) -> bool:
    """Model allocation always does; probabilistic stopping when its predictor is the ordinal model."""
    if study.adaptive_mode == Study.Adaptive.ALLOCATE:
        return True
    return study.adaptive_mode in _STOPPING_MODES and study.adaptive_predictor == Study.Predictor.ORDINAL


def ordinal_model_fitted(study: Study) -> bool:
    """Is there a model the study's design can read? Model allocation needs its fine-grid part (a
    model fitted while the study stopped probabilistically has none until the next refit)."""
    needed = "allocation" if study.adaptive_mode == Study.Adaptive.ALLOCATE else "prior"
    return uses_ordinal_model(study) and needed in (study.adaptive_model or {})


def adaptive_model_summary(study: Study) -> dict:
    """What the admin, the API and the report show of the fitted model; empty while the study's
    design reads none (before the first fit, or one without the part model allocation needs)."""
    if not ordinal_model_fitted(study):
        return {}
    model = study.adaptive_model
    return {
        "model": model["model"],
        "annotations": model["annotations"],
        "participants": len(model["participants"]),
        "fitted_at": model["fitted_at"],
    }


def ordinal_model_refit_request(*, study: Study) -> bool:
    """Queue a refit of the study's model once this transaction commits, if it is due; whether it was."""
    if not _refit_due(study):
        return False
    transaction.on_commit(lambda: _send_refit(study.pk))
    return True


def _refit_due(study: Study) -> bool:
    """Does the study use the model, and hold MIN_ANNOTATIONS_TO_FIT and REFIT_GROWTH more annotations
    than its stored model (which the design can read) saw?"""
    if not uses_ordinal_model(study):
        return False
    fitted = (study.adaptive_model or {}).get("annotations", 0) if ordinal_model_fitted(study) else 0
    held = _study_annotations(study.pk).count()
    return held >= MIN_ANNOTATIONS_TO_FIT and held > fitted * (1 + REFIT_GROWTH)


def _send_refit(study_id: int) -> None:
    try:
        task_send(REFIT_TASK, study_id)
    except OperationalError:  # the broker is away: the next completed task asks again
        logger.warning("could not queue the refit of study %s's ordinal model", study_id, exc_info=True)


def ordinal_model_refit(*, study_id: int) -> dict | None:
    """Fit the ordinal model to every annotation of the study, if a fit is still due, and store it;
    then, for model allocation, give every clip the stored model's priority if that has not been
    done yet. The model this call stored, or None (not due any more, nothing to fit, or a newer fit
    stored meanwhile: the model in use stands). A request queued while a fit ran finds it done
    once that fit is stored (with two workers fitting at once, both may fit; the newer is kept)."""
    study = Study.objects.get(pk=study_id)
    model = _model_fit(study) if _refit_due(study) else None
    if model is not None and not _model_store(study_id, model):
        model = None
    if study.adaptive_mode == Study.Adaptive.ALLOCATE:
        # Also when this call stored nothing: a refresh that failed (a database error) is done by the retry.
        _priorities_refresh(study_id)
    return model


def _model_fit(study: Study) -> dict | None:
    rows = list(_study_annotations(study.pk).values_list("participant_id", "item__study_item_id", "levels"))
    participants, annotator = np.unique([row[0] for row in rows], return_inverse=True)
    _, clip = np.unique([row[1] for row in rows], return_inverse=True)
    try:
        state = ordinal_state_fit(
            clip=clip, annotator=annotator, levels=_padded([row[2] for row in rows]), n_annotators=participants.size
        )
    except ValueError as error:  # e.g. no word marked yet: nothing to learn from
        logger.info("study %s: the ordinal model was not refitted (%s)", study.pk, error)
        return None
    model = {
        "model": "ordinal",
        "prior": state.prior.tolist(),
        "mark_chance": state.mark_chance.tolist(),
        "participants": {str(pk): params.tolist() for pk, params in zip(participants, state.parameters, strict=True)},
        "typical": np.median(state.parameters, axis=0).tolist(),
        "annotations": len(rows),
        "fitted_at": timezone.now().isoformat(timespec="seconds"),
    }
    if study.adaptive_mode == Study.Adaptive.ALLOCATE:
        model["allocation"] = allocation_model_part(state.parameters, state.prior)
        model["priorities"] = "pending"  # _priorities_refresh sets "refreshed" once every clip has them
    return model


def _model_store(study_id: int, model: dict) -> bool:
    """Store the model unless the stored one saw as many annotations (two refits finishing out of
    order keep the newer); a stored model without the fine-grid part that this one has is replaced."""
    older = Q(adaptive_model={}) | Q(adaptive_model__annotations__lt=model["annotations"])
    if "allocation" in model:
        older |= ~Q(adaptive_model__has_key="allocation")
    return bool(Study.objects.filter(older, pk=study_id).update(adaptive_model=model))


def allocation_model_part(parameters: np.ndarray, prior: np.ndarray) -> dict:
    """What model allocation reads of the fit, on the fine grid: the crowd's prominence distribution,
    its verdict of what is emphasized, its typical listener (a clip's own listeners are read from
    their parameters at each submission, so the study's crowd need not be stored on that grid)."""
    fine = prominence_model(parameters=parameters, prior=prior, labelled=np.ones(len(parameters), dtype=bool))
    return {
        "log_prior": fine.log_prior.tolist(),
        "emphasized": fine.emphasized.tolist(),
        "typical_log_confusion": fine.log_confusion[fine.typical].tolist(),
    }


def _priorities_refresh(study_id: int) -> None:
    """Give every annotated clip its priority under the stored model (the claim orders by it), in
    batches of REFRESH_BATCH clips, each in a transaction that locks the clips before it reads the
    model and their annotations. A submission writes its clip's priority with the clip locked and the
    model read under that lock, so whichever of the two writes last wrote it from all the clip's
    annotations committed by then, under the model standing then. Stops if a newer model is stored
    meanwhile (its own refit refreshes every clip); marks the model "refreshed" at the end."""
    if not _refresh_pending(Study.objects.get(pk=study_id)):
        return  # checked before any clip is locked, and again under the locks
    last, stamp = 0, None
    while True:
        with transaction.atomic():
            batch = list(
                StudyItem.objects.select_for_update()
                .filter(study_id=study_id, pk__gt=last, completed_count__gt=0)
                .order_by("pk")
                .only("pk", "priority")[:REFRESH_BATCH]
            )
            study = Study.objects.get(pk=study_id)
            if not _refresh_pending(study):
                return
            model = study.adaptive_model
            if stamp not in (None, _model_stamp(model)):
                return  # a newer model: its refit refreshes
            stamp = _model_stamp(model)
            if not batch:
                ours = Study.objects.filter(
                    pk=study_id, adaptive_model__annotations=stamp[0], adaptive_model__fitted_at=stamp[1]
                )
                ours.update(adaptive_model={**model, "priorities": "refreshed"})
                return
            annotations = clips_annotations([item.pk for item in batch])
            refreshed = [item for item in batch if annotations[item.pk]]
            for item in refreshed:
                item.priority = allocation_clip_priority(study, annotations[item.pk])
            StudyItem.objects.bulk_update(refreshed, ["priority"])
        last = batch[-1].pk


def _refresh_pending(study: Study) -> bool:
    """Has the stored model been fitted for allocation and its priorities not yet given to every clip?"""
    return ordinal_model_fitted(study) and study.adaptive_model.get("priorities") == "pending"


def _model_stamp(model: dict) -> tuple:
    return model.get("annotations"), model.get("fitted_at")


def clips_annotations(study_item_ids: list[int]) -> dict[int, list[tuple[int, list[int]]]]:
    """Each clip's annotations (participant pk, levels) in the order they came, those with a level
    for each of its words (the widest): what the model reads of a clip, at a refresh and at a
    submission."""
    by_clip: dict[int, list[tuple[int, list[int]]]] = {pk: [] for pk in study_item_ids}
    rows = Annotation.objects.filter(item__study_item_id__in=study_item_ids).order_by("pk")
    for study_item, participant, levels in rows.values_list("item__study_item_id", "participant_id", "levels"):
        by_clip[study_item].append((participant, levels))
    for pk, annotations in by_clip.items():
        width = max((len(levels) for _, levels in annotations), default=0)
        by_clip[pk] = [a for a in annotations if len(a[1]) == width]
    return by_clip


def allocation_clip_priority(study: Study, annotations: list[tuple[int, list[int]]]) -> float:
    """Model allocation's value of one more listener on a clip, from its annotations (participant
    pk, levels), under the study's fitted model (evaluation.stats.allocation.model_clip_priority)."""
    part = study.adaptive_model["allocation"]
    crowd = ProminenceModel(
        log_prior=np.asarray(part["log_prior"]),
        log_confusion=np.asarray(part["typical_log_confusion"])[None],
        emphasized=np.asarray(part["emphasized"], dtype=bool),
        fitted=np.zeros(0, dtype=bool),
    )
    clip = listeners_model(crowd, _parameters_of(study, annotations))
    levels = np.array([row for _, row in annotations], dtype=np.int64)
    words = levels.shape[1]
    likelihood = word_log_likelihoods(
        clip,
        row_word=np.tile(np.arange(words), len(annotations)),
        row_annotator=np.repeat(np.arange(len(annotations)), words),
        row_level=levels.ravel(),
        words=words,
    )
    return model_clip_priority(clip, likelihood)


def _parameters_of(study: Study, annotations: list[tuple[int, list[int]]]) -> np.ndarray:
    """(k, 3) the fitted parameters of each annotation's participant; the median ones for a participant
    the fit has not seen."""
    known, typical = study.adaptive_model["participants"], study.adaptive_model["typical"]
    return np.array([known.get(str(participant), typical) for participant, _ in annotations], dtype=float)


def ordinal_clip_predictive(study: Study, annotations: list[tuple[int, list[int]]]) -> OrdinalPredictive:
    """The predictive of a clip's further marks from its annotations (participant pk, levels) under
    the study's fitted model (ordinal_model_fitted must hold)."""
    model = study.adaptive_model
    parameters = _parameters_of(study, annotations)
    levels = np.array([row for _, row in annotations], dtype=np.int64)
    words = levels.shape[1]
    state = OrdinalState(
        prior=np.asarray(model["prior"]), parameters=parameters, mark_chance=np.asarray(model["mark_chance"])
    )
    posterior = prominence_posterior(
        state,
        row_word=np.tile(np.arange(words), len(annotations)),
        row_parameters=np.repeat(parameters, words, axis=0),
        row_level=levels.ravel(),
        words=words,
    )
    return OrdinalPredictive(posterior, state.mark_chance)


def _study_annotations(study_id: int):
    # The annotations that the clips' adaptive counts hold: attention checks are not study items, and
    # a rejected participant's work no longer counts (annotation.services.review frees its places),
    # so it no longer teaches the model who the study's listeners are either.
    return Annotation.objects.filter(item__study_item__study_id=study_id).exclude(
        participant__decision=Participant.Decision.REJECTED
    )


def _padded(rows: list[list[int]]) -> np.ndarray:
    """Levels rows of a study's clips (of their own lengths) as one array, -1 past a clip's last word."""
    width = max(len(row) for row in rows)
    return np.array([list(row) + [-1] * (width - len(row)) for row in rows], dtype=np.int64)
