"""Probabilistic stopping whose further marks the ordinal annotator model foresees
(Study.adaptive_predictor "ordinal", annotation.services.adaptive_model): through the real
participant pages as tests.annotation.test_adaptive_designs runs the other modes, the refit a
completed task asks for, and what the model makes of who gave a mark."""

import json

import numpy as np
import pytest
from django.urls import reverse

from annotation.models import Annotation, Participant, Study, StudyItem
from annotation.services.adaptive import item_state
from annotation.services.adaptive_model import (
    REFIT_GROWTH,
    adaptive_model_summary,
    allocation_clip_priority,
    allocation_model_part,
    ordinal_clip_predictive,
    ordinal_model_fitted,
    ordinal_model_refit,
    ordinal_model_refit_request,
)
from annotation.services.assignment import assignment_claim
from evaluation.services.agreement_reports import agreement_report_compute, report_parameters
from evaluation.stats.annotator_models import GRID, ordinal_confusion
from evaluation.stats.stopping import flip_probabilities
from tests.annotation import test_adaptive_designs as pages
from tests.annotation.admin_forms import change_page_data
from tests.annotation.design_checks import seed_design_check
from tests.annotation.study_helpers import live_study, ready_participant
from tests.api.callers import staff_with, token_client
from tests.evaluation.test_agreement_report_page import QUERY, compute

pytestmark = pytest.mark.django_db

TYPICAL = [1.55, float(np.log(1.2)), 0.0]  # t1, log of the gap to t2, log sigma
EAGER, WARY = [0.3, float(np.log(1.2)), 0.0], [2.8, float(np.log(1.2)), 0.0]


def pilot_model(participants: dict[str, list[float]] | None = None) -> dict:
    """A fitted model as the refit stores it: most words plain, a fifth of them prominent."""
    prior = 0.8 * np.exp(-0.5 * GRID**2) + 0.2 * np.exp(-0.5 * (GRID - 3.0) ** 2)
    mark_chance = 1.0 - ordinal_confusion(np.array([TYPICAL]))[0, :, 0]
    return {
        "model": "ordinal",
        "prior": (prior / prior.sum()).tolist(),
        "mark_chance": mark_chance.tolist(),
        "participants": participants or {},
        "typical": TYPICAL,
        "annotations": 100,
        "fitted_at": "2026-12-02T10:00:00+00:00",
    }


def ordinal_settings(**more) -> dict:
    return {
        "adaptive_mode": Study.Adaptive.PROBABILISTIC,
        "adaptive_predictor": Study.Predictor.ORDINAL,
        "adaptive_epsilon": 0.05,
        "adaptive_min_annotators": 3,
        **more,
    }


def replayed_stop(study: Study, item) -> int:
    """Where the ordinal rule stops this clip, from its annotations in the order they arrived."""
    rows = list(Annotation.objects.filter(item__study_item=item).order_by("pk").values_list("participant_id", "levels"))
    levels = np.array([row for _, row in rows])
    for seen in range(1, len(rows) + 1):
        marks, heavy = (levels[:seen] >= 1).sum(axis=0), (levels[:seen] == 2).sum(axis=0)
        if item_state(study, marks, heavy, seen, rows[:seen])[0]:
            return seen
    return len(rows)


def test_the_ordinal_predictor_stops_clips_where_its_flip_probability_falls_below_epsilon():
    # Submissions ask for a refit on commit; a test's transaction never commits, so the pilot's
    # model stands throughout and the replay below judges under the same model.
    study, clip_index = pages.run_study(**ordinal_settings(adaptive_model=pilot_model()))
    spent = pages.counts(study, clip_index)
    assert spent[pages.CONTESTED] == pages.TARGET
    assert all(spent[clip] < pages.TARGET for clip in spent if clip != pages.CONTESTED)
    for item in study.items.all():
        assert item.completed_count == replayed_stop(study, item)


def test_before_its_first_fit_the_beta_binomial_stands_in():
    beta = {"adaptive_epsilon": 0.05, "adaptive_min_annotators": 3, "adaptive_prior": {"a": 0.3, "b": 1.0}}
    spent = {
        name: pages.counts(*pages.run_study(**settings))
        for name, settings in {
            "ordinal, fitted": ordinal_settings(adaptive_model=pilot_model()),
            "ordinal, not yet fitted": ordinal_settings(adaptive_prior=beta["adaptive_prior"]),
            "beta-binomial": {"adaptive_mode": Study.Adaptive.PROBABILISTIC, **beta},
        }.items()
    }
    assert spent["ordinal, not yet fitted"] == spent["beta-binomial"]
    assert spent["ordinal, fitted"] != spent["beta-binomial"]


def test_a_word_marked_by_a_wary_listener_is_likelier_to_be_emphasized_than_one_marked_by_an_eager_one():
    study = Study(
        adaptive_mode=Study.Adaptive.PROBABILISTIC,
        adaptive_predictor=Study.Predictor.ORDINAL,
        adaptive_model=pilot_model({"1": EAGER, "2": WARY}),
    )
    quiet = [(3, [0, 0]), (4, [0, 0])]  # two listeners the fit never saw: the typical thresholds
    by_eager = ordinal_clip_predictive(study, [(1, [1, 0]), *quiet])
    by_wary = ordinal_clip_predictive(study, [(2, [1, 0]), *quiet])
    marks = np.array([1, 0])
    eager_flips, wary_flips = (flip_probabilities(marks, 3, 7, p) for p in (by_eager, by_wary))
    assert wary_flips[0] > 2 * eager_flips[0]
    unseen = ordinal_clip_predictive(study, [(98, [1, 0]), *quiet])
    also_unseen = ordinal_clip_predictive(study, [(99, [1, 0]), *quiet])
    np.testing.assert_allclose(unseen.posterior, also_unseen.posterior)


def eager_or_wary(clip_index: int, listener: int, words: int) -> list[int]:
    """Even listeners mark the first three words of every clip (as many as a study allows); odd ones the first."""
    marked = 3 if listener % 2 == 0 else 1
    return [1] * marked + [0] * (words - marked)


def test_completed_tasks_refit_the_model_with_each_participants_thresholds(
    monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    with django_capture_on_commit_callbacks(execute=True) as queued:
        study, _ = pages.run_study(**ordinal_settings())
    assert queued, "no completed task asked for a refit"
    study.refresh_from_db()
    model = study.adaptive_model
    held = Annotation.objects.filter(item__study_item__study=study).count()
    assert held <= model["annotations"] * (1 + REFIT_GROWTH)
    thresholds = {int(pk): params[0] for pk, params in model["participants"].items()}
    listeners = dict(Participant.objects.filter(pk__in=thresholds).values_list("pk", "prolific_pid"))
    eager = [t for pk, t in thresholds.items() if int(listeners[pk], 16) % 2 == 0]
    wary = [t for pk, t in thresholds.items() if int(listeners[pk], 16) % 2 == 1]
    assert eager and wary and max(eager) < min(wary)
    assert adaptive_model_summary(study)["participants"] == len(thresholds)


def test_a_refit_leaves_out_the_work_of_rejected_participants(monkeypatch, django_capture_on_commit_callbacks):
    """Their places are freed and their annotations no longer count: nor do they teach the model."""
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    with django_capture_on_commit_callbacks(execute=True):
        study, _ = pages.run_study(**ordinal_settings())
    study.refresh_from_db()
    rejected = Participant.objects.filter(pk__in=[int(pk) for pk in study.adaptive_model["participants"]]).first()
    Participant.objects.filter(pk=rejected.pk).update(decision=Participant.Decision.REJECTED)
    Study.objects.filter(pk=study.pk).update(adaptive_model={})  # so that a refit is due again
    model = ordinal_model_refit(study_id=study.pk)
    kept = Annotation.objects.filter(item__study_item__study=study).exclude(participant=rejected).count()
    assert model is not None and model["annotations"] == kept
    assert str(rejected.pk) not in model["participants"]


def test_a_refit_is_asked_for_only_once_the_annotations_have_grown(monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)  # listeners who disagree: clips need more of them
    study, _ = pages.run_study(**ordinal_settings())
    assert ordinal_model_refit(study_id=study.pk) is not None
    study.refresh_from_db()
    with django_capture_on_commit_callbacks() as queued:
        assert not ordinal_model_refit_request(study=study)
    assert not queued
    assert ordinal_model_refit(study_id=study.pk) is None, "a fit of no more annotations replaced the stored one"


def test_a_study_without_the_ordinal_predictor_never_asks_for_a_refit(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as queued:
        study, _ = pages.run_study(adaptive_mode=Study.Adaptive.EXACT)
    assert not queued
    assert study.adaptive_model == {}


def test_the_api_shows_the_predictor_and_the_fitted_model():
    study, _ = pages.run_study(**ordinal_settings(adaptive_model=pilot_model({"1": EAGER})))
    api = token_client(staff_with("annotation.view_study"))
    adaptive = api.get(f"/api/v1/studies/{study.pk}/").json()["adaptive"]
    assert adaptive["predictor"] == "ordinal"
    assert adaptive["model"] == {
        "model": "ordinal",
        "annotations": 100,
        "participants": 1,
        "fitted_at": "2026-12-02T10:00:00+00:00",
    }


def test_the_admin_sets_the_predictor_and_shows_the_fitted_model(admin_client):
    study, _ = pages.run_study(adaptive_mode=Study.Adaptive.PROBABILISTIC)
    seed_design_check(study)  # the ordinal predictor is chosen only where the study's check says it helps
    url = reverse("admin:annotation_study_change", args=[study.pk])
    page = admin_client.get(url)
    assert "not fitted yet: the beta-binomial predicts until the first fit" in page.content.decode()

    saved = admin_client.post(url, {**change_page_data(page), "adaptive_predictor": "ordinal"})
    assert saved.status_code == 302
    study.refresh_from_db()
    assert study.adaptive_predictor == Study.Predictor.ORDINAL

    Study.objects.filter(pk=study.pk).update(adaptive_model=pilot_model({"1": EAGER, "2": WARY}))
    shown = admin_client.get(url).content.decode()
    assert "fitted to 100 annotations by 2 participants, 2026-12-02T10:00:00 UTC" in shown


def test_the_report_names_the_predictor_and_the_fit(admin_client, django_capture_on_commit_callbacks):
    study, _ = pages.run_study(**ordinal_settings(adaptive_model=pilot_model({"1": EAGER, "2": WARY})))
    report = json.loads(agreement_report_compute(study=study, parameters=report_parameters(study=study, resamples=0)))
    settings = report["adaptive_design"]["settings"]
    assert settings["predictor"] == "ordinal" and settings["ordinal_model"]["participants"] == 2

    page = compute(admin_client, study, django_capture_on_commit_callbacks, **{**QUERY, "subsample": 0})
    assert (
        "foreseen by the ordinal annotator model, last fitted to 100 annotations by 2 participants"
        in page.content.decode()
    )


def allocating(**more) -> dict:
    model = pilot_model()
    model["allocation"] = allocation_model_part(np.array([TYPICAL]), np.asarray(model["prior"]))
    # Tasks of two of the four clips: a listener's clips are the claim's choice, not all there are.
    return {
        "adaptive_mode": Study.Adaptive.ALLOCATE,
        "adaptive_min_annotators": 3,
        "adaptive_model": model,
        "clips_per_task": 2,
        **more,
    }


def test_model_allocation_gives_every_clip_its_minimum_then_spends_exactly_the_fixed_budget():
    study, clip_index = pages.run_study(**allocating())
    spent = pages.counts(study, clip_index)
    assert sum(spent.values()) == 4 * pages.TARGET  # the fixed design's budget, to the annotation
    assert min(spent.values()) >= 3 and max(spent.values()) <= pages.MAXIMUM
    study.refresh_from_db()
    assert study.target_reached_at is not None  # the budget spent is the target reached
    for item in study.items.all():
        rows = list(
            Annotation.objects.filter(item__study_item=item).order_by("pk").values_list("participant_id", "levels")
        )
        assert item.priority == pytest.approx(allocation_clip_priority(study, rows))


def test_past_the_minimum_a_claim_takes_the_clips_of_highest_priority():
    study = live_study(clips=6, target_annotations=4, **allocating(adaptive_min_annotators=2))
    items = list(study.items.order_by("pk"))
    for item, priority in zip(items, [0.01, 0.3, 0.02, 0.2, 0.0, 0.05], strict=True):
        StudyItem.objects.filter(pk=item.pk).update(completed_count=2, priority=priority)
    task = assignment_claim(participant=ready_participant(study, prolific_pid="c" * 24))
    handed = set(task.items.values_list("study_item_id", flat=True))
    assert handed == {items[1].pk, items[3].pk}

    StudyItem.objects.filter(pk=items[0].pk).update(completed_count=1)  # one still owed its minimum
    task = assignment_claim(participant=ready_participant(study, prolific_pid="d" * 24))
    assert set(task.items.values_list("study_item_id", flat=True)) == {items[0].pk, items[1].pk}


def test_a_refit_gives_every_clip_the_new_models_priority(monkeypatch):
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    study, _ = pages.run_study(adaptive_mode=Study.Adaptive.ALLOCATE, adaptive_min_annotators=3)
    before = dict(study.items.values_list("pk", "priority"))
    assert ordinal_model_refit(study_id=study.pk) is not None
    study.refresh_from_db()
    after = dict(study.items.values_list("pk", "priority"))
    for pk, priority in after.items():
        rows = list(
            Annotation.objects.filter(item__study_item_id=pk).order_by("pk").values_list("participant_id", "levels")
        )
        assert priority == pytest.approx(allocation_clip_priority(study, rows))
    assert after != before


def test_a_study_that_turns_to_model_allocation_waits_for_a_refit_with_the_fine_grid(monkeypatch):
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)  # enough annotations to refit
    study, _ = pages.run_study(**ordinal_settings(adaptive_model=pilot_model()))
    Study.objects.filter(pk=study.pk).update(adaptive_mode=Study.Adaptive.ALLOCATE)
    study.refresh_from_db()
    assert not ordinal_model_fitted(study)  # its model has no allocation part: the beta-binomial stands in
    model = ordinal_model_refit(study_id=study.pk)
    assert model is not None and "allocation" in model
