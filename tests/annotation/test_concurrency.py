"""Many participants claiming and submitting at once, on PostgreSQL."""

import threading

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from annotation.models import Annotation, StudyItem, TaskItem
from annotation.services import submission_rows
from annotation.services.assignment import NoTaskAvailable, assignment_claim, task_expire
from annotation.services.submission import annotation_submit
from tests.annotation.study_helpers import first_pending, listened, live_study, marks, ready_participant

CLAIMERS = 40


def run_in_threads(work, arguments):
    errors, barrier = [], threading.Barrier(len(arguments))

    def run(argument):
        try:
            barrier.wait()
            work(argument)
        except Exception as error:  # collected and re-raised in the test
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(argument,)) for argument in arguments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_and_submissions_keep_every_invariant():
    if connection.vendor != "postgresql":
        pytest.skip("row locks (SELECT ... FOR UPDATE SKIP LOCKED) are tested on PostgreSQL")
    # 30 clips x target 4 = 120 places for 40 claimers x 5 clips = 200 requests: scarcity is real.
    study = live_study(clips=30, clips_per_task=5, target_annotations=4)
    participants = [ready_participant(study, prolific_pid=f"{n:024x}") for n in range(CLAIMERS)]
    acknowledged, lock = [], threading.Lock()

    def claim_and_submit(participant):
        try:
            task = assignment_claim(participant=participant)
        except NoTaskAvailable:
            return
        while (item := first_pending(task)) is not None:
            listened(item)
            result = annotation_submit(
                participant_id=participant.pk, item_id=item.pk, levels=marks(item, 1), mismatch=False
            )
            annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=marks(item, 1), mismatch=False)
            with lock:
                acknowledged.append(result.annotation.pk)

    errors = run_in_threads(claim_and_submit, participants)

    assert errors == []
    assert len(acknowledged) == 120  # every place filled, none twice
    assert set(Annotation.objects.values_list("pk", flat=True)) == set(acknowledged)
    for item in StudyItem.objects.filter(study=study):
        assert item.completed_count == Annotation.objects.filter(clip_id=item.clip_id).count() <= 4
        assert item.reserved_count == 0
    pairs = list(TaskItem.objects.values_list("task__participant_id", "clip_id"))
    assert len(pairs) == len(set(pairs))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_expiry_racing_a_submit_counts_the_clip_once():
    """The submit claims its item and holds the transaction open while the task
    expires in another connection: the expiry waits for the item, then leaves it
    to the submit, so its reservation is counted down once, not twice."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks are tested on PostgreSQL")
    study = live_study(clips=3, clips_per_task=2, target_annotations=1)
    task = assignment_claim(participant=ready_participant(study))
    item = first_pending(task)
    claimed, expired = threading.Event(), threading.Event()

    def submit(_):
        with transaction.atomic():
            annotation = Annotation(
                item_id=item.pk,
                participant_id=task.participant_id,
                clip_id=item.clip_id,
                levels=marks(item, 1),
                coverage=1.0,
                seconds_spent=2.0,
                submitted_at=timezone.now(),
            )
            assert submission_rows.submission_store(
                annotation,
                task_id=task.pk,
                events=[],
                threshold=2,
                study_item_id=item.study_item_id,
                completes_task=False,
            )
            claimed.set()
            assert not expired.wait(1.0)  # the expiry is blocked on this item's row lock

    def expire(_):
        claimed.wait(5)
        task_expire(task_id=task.pk)
        expired.set()

    errors = run_in_threads(lambda work: work(None), [submit, expire])

    assert errors == []
    assert TaskItem.objects.get(pk=item.pk).status == TaskItem.Status.SUBMITTED
    assert sorted(StudyItem.objects.filter(study=study).values_list("completed_count", "reserved_count")) == [
        (0, 0),
        (0, 0),
        (1, 0),
    ]
