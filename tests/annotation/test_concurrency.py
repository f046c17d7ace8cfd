"""Many participants claiming and submitting at once, on PostgreSQL."""

import threading

import pytest
from django.db import connection, connections

from annotation.models import Annotation, StudyItem, TaskItem
from annotation.services.assignment import NoTaskAvailable, assignment_claim
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
            result = annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=marks(item, 1), mismatch=False)
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
