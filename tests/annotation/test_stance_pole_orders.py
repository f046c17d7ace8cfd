"""Stance pole orders (issue 13, StanceBench): every item is shown in both orders, balanced per
item and, where the items allow it, per participant; released presentations are given again."""

import contextlib
import random
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import ListeningFormItem, Study, Task, TaskItem
from annotation.services.assignment import NoTaskAvailable, assignment_claim
from annotation.services.listening_forms import ListeningFormItemSpec
from annotation.services.pole_orders import pole_orders_choose
from annotation.services.submission import annotation_submit
from evaluation.selectors.listening_form_reports import listening_form_report_data
from tests.annotation.study_helpers import listened_to_all, live_form, ready_participant
from tests.annotation.test_concurrency import run_in_threads

# --- the rule, without a database ------------------------------------------------------------


def test_an_item_gets_the_order_it_was_given_fewer_times():
    given = {1: Counter(PN=2, NP=1), 2: Counter(PN=0, NP=3), 3: Counter(PN=1)}

    chosen = pole_orders_choose(given=given, participant=Counter(), rng=random.Random(0))

    assert chosen == {1: "NP", 2: "PN", 3: "NP"}


def test_tied_items_even_out_the_participant_after_the_decided_ones():
    given = {1: Counter(), 2: Counter(PN=1, NP=1), 3: Counter(NP=1), 4: Counter(NP=2, PN=1)}  # 3, 4 decided: PN

    for seed in range(20):
        chosen = pole_orders_choose(given=given, participant=Counter(), rng=random.Random(seed))
        assert chosen == {1: "NP", 2: "NP", 3: "PN", 4: "PN"}


def test_the_participants_earlier_orders_count_and_a_full_tie_is_random():
    given = {1: Counter(), 2: Counter()}

    assert pole_orders_choose(given=given, participant=Counter(PN=3, NP=1), rng=random.Random(0)) == {1: "NP", 2: "NP"}
    drawn = {
        tuple(pole_orders_choose(given=given, participant=Counter(), rng=random.Random(s)).values()) for s in range(20)
    }
    assert drawn == {("PN", "NP"), ("NP", "PN")}  # the first at random, the second evens it out


# --- through the assignment service -----------------------------------------------------------


def stance_items(count: int):
    def specs(clips):
        return [
            ListeningFormItemSpec(
                f"s{n}",
                ListeningFormItem.Type.STANCE,
                clips[n],
                settings={"dimension": "warmth", "positive": "warm", "negative": "cold"},
            )
            for n in range(count)
        ]

    return specs


def stance_form(items: int, **settings) -> Study:
    return live_form(specs=stance_items(items), clips=items, **settings)


def orders_by_item(study: Study) -> dict[str, Counter]:
    """Pole orders that count (not released), per form item."""
    counts = {item.external_id: Counter() for item in ListeningFormItem.objects.filter(study=study)}
    rows = (
        TaskItem.objects.filter(task__study=study)
        .exclude(status=TaskItem.Status.RELEASED)
        .values_list("study_item__form_item__external_id", "presentation")
    )
    for external_id, presentation in rows:
        counts[external_id][presentation["pole_order"]] += 1
    return counts


def orders_of(task: Task) -> dict[str, str]:
    items = task.items.select_related("study_item__form_item")
    return {item.study_item.form_item.external_id: item.presentation["pole_order"] for item in items}


def answer(task: Task, *, only: int | None = None) -> None:
    """Submit the task's items in order (the first `only` of them), as the form's page would."""
    for item in list(task.items.order_by("position"))[:only]:
        listened_to_all(item)
        response = {"pole": "P", "confidence": 0.5, "pole_order": item.presentation["pole_order"]}
        annotation_submit(
            participant_id=task.participant_id, item_id=item.pk, levels=[], response=response, mismatch=False
        )


@pytest.mark.django_db
def test_four_listeners_see_every_item_twice_in_each_order():
    study = stance_form(6, target_annotations=4)
    tasks = []
    for n in range(4):
        tasks.append(assignment_claim(participant=ready_participant(study)))
        if n < 2:
            answer(tasks[-1])  # two finish, two are still at it: open tasks count too

    assert all(counts == Counter(PN=2, NP=2) for counts in orders_by_item(study).values())
    for task in tasks:  # six items each: balanced per participant too
        assert Counter(orders_of(task).values()) == Counter(PN=3, NP=3)
    assert orders_of(tasks[1]) == {item: "NP" if order == "PN" else "PN" for item, order in orders_of(tasks[0]).items()}
    with pytest.raises(NoTaskAvailable):
        assignment_claim(participant=ready_participant(study))


@pytest.mark.django_db
@pytest.mark.parametrize("target", [3, 5])
def test_with_an_odd_target_the_two_orders_differ_by_one_at_most(target):
    study = stance_form(4, target_annotations=target, clips_per_task=3)  # tasks take different items
    while True:
        try:
            answer(assignment_claim(participant=ready_participant(study)))
        except NoTaskAvailable:
            break

    counts = orders_by_item(study)
    assert all(sum(c.values()) == target and abs(c["PN"] - c["NP"]) == 1 for c in counts.values())


@pytest.mark.django_db
def test_an_abandoned_task_gives_its_orders_again():
    study = stance_form(4, target_annotations=2)
    first = assignment_claim(participant=ready_participant(study))
    dropout = assignment_claim(participant=ready_participant(study))
    answer(dropout, only=1)
    kept = dropout.items.get(status=TaskItem.Status.SUBMITTED).study_item.form_item.external_id
    Task.objects.filter(pk=dropout.pk).update(expires_at=timezone.now() - timedelta(minutes=1))  # gave up

    third = assignment_claim(participant=ready_participant(study))

    assert Task.objects.get(pk=dropout.pk).status == Task.Status.EXPIRED
    assert Task.objects.get(pk=first.pk).status == Task.Status.OPEN
    released = {item: order for item, order in orders_of(dropout).items() if item != kept}
    assert orders_of(third) == released  # the released presentations, in the orders they had
    assert all(counts == Counter(PN=1, NP=1) for counts in orders_by_item(study).values())


@pytest.mark.django_db
def test_the_report_counts_the_items_lacking_one_order():
    study = stance_form(3, target_annotations=2)
    answer(assignment_claim(participant=ready_participant(study)))
    answer(assignment_claim(participant=ready_participant(study)), only=1)  # the other two wait for the second order

    warmth = listening_form_report_data(study=study)["stance"]["per_dimension"]["warmth"]

    assert warmth["items"] == 3
    assert warmth["disagreement"]["items_with_both_orders"] == 1
    assert warmth["disagreement"]["items_lacking_one_order"] == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_keep_every_item_balanced():
    if connection.vendor != "postgresql":
        pytest.skip("row locks (SELECT ... FOR UPDATE SKIP LOCKED) are tested on PostgreSQL")
    # 12 items x target 4 = 48 presentations for 24 claimers x 3 items = 72 requests.
    study = stance_form(12, target_annotations=4, clips_per_task=3)
    participants = [ready_participant(study, prolific_pid=f"{n:024x}") for n in range(24)]

    def claim(participant):
        with contextlib.suppress(NoTaskAvailable):
            assignment_claim(participant=participant)

    errors = run_in_threads(claim, participants)

    assert errors == []
    assert all(counts == Counter(PN=2, NP=2) for counts in orders_by_item(study).values())
