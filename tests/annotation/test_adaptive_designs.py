"""Adaptive designs through the real participant pages (Django test client): scripted participants
enter by the study link, claim by the instructions page, listen (recorded playback) and submit on
the task page, until the study has no clip left for them; each clip then holds the annotations
the study's rule says, replayed from the stored annotations with evaluation.stats.stopping."""

import re

import numpy as np
import pytest
from django.test import Client

from annotation.models import Annotation, PrerequisiteQuestion, Study, StudyItem, TaskItem
from annotation.services.adaptive import adaptive_prior_refit, item_state
from tests.annotation.study_helpers import listened, live_study

pytestmark = pytest.mark.django_db

TARGET, MAXIMUM = 7, 10
CONTESTED = 2  # the clip whose second word half the listeners mark
SPREAD = 0  # the clip whose first word listeners mark at levels 1 and 2 in turn


def levels_of(clip_index: int, listener: int, words: int) -> list[int]:
    """Every listener marks the first word; on the contested clip, every other listener the second too."""
    levels = [0] * words
    levels[0] = 1 + listener % 2 if clip_index == SPREAD else 1
    if clip_index == CONTESTED and listener % 2 == 1:
        levels[1] = 2
    return levels


def participate(study: Study, listener: int, clip_index: dict[int, int]) -> int:
    """One participant through the pages; how many clips they were given (0: none was left)."""
    client = Client()
    pid = f"{listener:024x}"
    client.get(f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID={'a' * 24}&SESSION_ID={'b' * 24}")
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    answers = {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)}
    client.post(f"/s/{study.slug}/screening/", answers)
    claimed = client.post(f"/s/{study.slug}/instructions/", follow=True).content.decode()
    page = client.get(f"/s/{study.slug}/task/").content.decode()
    done = 0
    while (found := re.search(r'data-item="(\d+)"', page)) is not None:
        item = TaskItem.objects.get(pk=int(found.group(1)))
        listened(item)
        levels = levels_of(clip_index[item.clip_id], listener, item.word_count)
        response = client.post(
            f"/s/{study.slug}/task/items/{item.pk}/submit",
            {"levels": ",".join(map(str, levels)), "events": "[]"},
            HTTP_HX_REQUEST="true",
        )
        assert response.status_code == 200, response.content[:300]
        done += 1
        page = client.get(f"/s/{study.slug}/task/").content.decode()
    if not done:
        assert "no clip left" in claimed
    return done


def run_study(**settings) -> tuple[Study, dict[int, int]]:
    settings = {"adaptive_max_per_clip": MAXIMUM, "clips_per_task": 4, **settings}
    study = live_study(clips=4, target_annotations=TARGET, **settings)
    clip_index = {item.clip_id: index for index, item in enumerate(study.items.order_by("clip_id"))}
    listener = 0
    while participate(study, listener, clip_index):
        listener += 1
        assert listener < 40, "the study never ran out of clips"
    return study, clip_index


def counts(study: Study, clip_index: dict[int, int]) -> dict[int, int]:
    return {clip_index[item.clip_id]: item.completed_count for item in study.items.all()}


def replayed_stop(study: Study, item: StudyItem) -> int:
    """Where the study's rule stops this clip, from its annotations in the order they arrived."""
    rows = Annotation.objects.filter(item__study_item=item).order_by("submitted_at", "pk")
    levels = np.array([row.levels for row in rows])
    for seen in range(1, len(levels) + 1):
        settled, _ = item_state(study, (levels[:seen] >= 1).sum(axis=0), (levels[:seen] == 2).sum(axis=0), seen)
        if settled:
            return seen
    return len(levels)


def test_a_fixed_study_gives_every_clip_its_target():
    study, clip_index = run_study()
    assert counts(study, clip_index) == dict.fromkeys(range(4), TARGET)
    assert not StudyItem.objects.filter(settled=True).exists()  # a fixed study never keeps adaptive state
    assert StudyItem.objects.filter(word_marks=[]).count() == 4


def test_exact_stopping_stops_clips_once_no_listener_can_change_a_binary_label():
    study, clip_index = run_study(adaptive_mode=Study.Adaptive.EXACT)
    # 4 of 7 marks decide the first word; the unmarked ones can no longer reach 4 after 4 listeners.
    assert counts(study, clip_index) == {0: 4, 1: 4, CONTESTED: TARGET, 3: 4}
    for item in study.items.all():
        assert item.completed_count == replayed_stop(study, item)
        assert item.settled
    contested = study.items.get(clip_id=next(c for c, i in clip_index.items() if i == CONTESTED))
    assert contested.word_marks[:2] == [TARGET, 3] and contested.word_heavy[1] == 3


def test_a_scalar_bound_keeps_clips_listening_until_their_scalar_labels_are_settled():
    study, clip_index = run_study(adaptive_mode=Study.Adaptive.EXACT, adaptive_scalar_se=0.1)
    # The first word's scores 0.5 and 1 in turn have a standard error above 0.1 until the target.
    assert counts(study, clip_index) == {SPREAD: TARGET, 1: 4, CONTESTED: TARGET, 3: 4}


def test_probabilistic_stopping_stops_where_the_flip_probability_falls_below_epsilon():
    study, clip_index = run_study(
        adaptive_mode=Study.Adaptive.PROBABILISTIC,
        adaptive_epsilon=0.05,
        adaptive_min_annotators=3,
        adaptive_prior={"a": 0.3, "b": 1.0},  # as if fitted to a pilot: 40 words are too few to refit
    )
    assert counts(study, clip_index) == {0: 3, 1: 3, CONTESTED: TARGET, 3: 3}
    for item in study.items.all():
        assert item.completed_count == replayed_stop(study, item)


def test_reallocation_spends_the_saved_listeners_on_the_contested_clip_up_to_the_maximum():
    study, clip_index = run_study(
        adaptive_mode=Study.Adaptive.REALLOCATE,
        adaptive_epsilon=0.05,
        adaptive_min_annotators=3,
        adaptive_prior={"a": 0.3, "b": 1.0},
    )
    assert counts(study, clip_index) == {0: 3, 1: 3, CONTESTED: MAXIMUM, 3: 3}
    assert sum(counts(study, clip_index).values()) <= 4 * TARGET  # within the fixed design's budget


def test_reallocation_never_spends_more_than_the_fixed_budget():
    # With a maximum far above what the savings pay for, the contested clip gets exactly the savings.
    study, clip_index = run_study(
        adaptive_mode=Study.Adaptive.REALLOCATE,
        adaptive_epsilon=0.05,
        adaptive_min_annotators=5,
        adaptive_max_per_clip=40,
        adaptive_prior={"a": 0.3, "b": 1.0},
    )
    spent = counts(study, clip_index)
    assert spent[CONTESTED] > TARGET
    assert sum(spent.values()) == 4 * TARGET


def test_the_prior_is_refitted_to_the_studys_counts_once_there_are_enough_words():
    study = live_study(clips=6, target_annotations=TARGET, adaptive_mode=Study.Adaptive.PROBABILISTIC)
    rng = np.random.default_rng(0)
    for item in study.items.all():
        marks = rng.binomial(5, rng.beta(0.3, 2.0, size=10))
        StudyItem.objects.filter(pk=item.pk).update(word_marks=marks.tolist(), completed_count=5)
    fitted = adaptive_prior_refit(study_id=study.pk)
    study.refresh_from_db()
    assert study.adaptive_prior == fitted and fitted["words"] == 60 and fitted["a"] > 0 and fitted["b"] > 0


def test_a_top_up_plan_counts_only_clips_the_design_still_needs():
    from annotation.services.topups import topup_plan

    study, _ = run_study(adaptive_mode=Study.Adaptive.EXACT)
    assert study.items.filter(completed_count__lt=TARGET).count() == 3  # stopped early, not missing
    study.items.filter(completed_count=TARGET).update(completed_count=TARGET - 2, settled=False)
    plan = topup_plan(study=study)
    assert (plan.total.clips_below_target, plan.total.missing_annotations) == (1, 2)
