"""Reallocation and model allocation under concurrent claims on PostgreSQL: however many claim at once, the saved budget
is spent once (the study's row lock), no clip passes the maximum and no clip is handed out twice
to one participant (the clips' skipped row locks)."""

import threading

import pytest
from django.db import connection

from annotation.models import Annotation, Study, StudyItem, TaskItem
from annotation.services.assignment import NoTaskAvailable, assignment_claim
from annotation.services.submission import annotation_submit
from tests.annotation.study_helpers import first_pending, listened, live_study, marks, ready_participant
from tests.annotation.test_concurrency import run_in_threads

CLAIMERS, CLIPS, TARGET, MAXIMUM = 30, 12, 4, 8


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", [Study.Adaptive.REALLOCATE, Study.Adaptive.ALLOCATE])
def test_concurrent_claims_never_spend_more_than_the_fixed_budget(mode):
    if connection.vendor != "postgresql":
        pytest.skip("row locks (SELECT ... FOR UPDATE SKIP LOCKED) are tested on PostgreSQL")
    study = live_study(
        clips=CLIPS,
        clips_per_task=3,
        target_annotations=TARGET,
        adaptive_mode=mode,
        adaptive_max_per_clip=MAXIMUM,
        adaptive_min_annotators=2,
        adaptive_epsilon=0.05,
        adaptive_prior={"a": 0.3, "b": 1.0},
    )
    contested = set(study.items.order_by("clip_id").values_list("clip_id", flat=True)[: CLIPS // 3])
    participants = [ready_participant(study, prolific_pid=f"{n:024x}") for n in range(CLAIMERS)]
    lock, submitted = threading.Lock(), []

    def claim_and_submit(participant):
        try:
            task = assignment_claim(participant=participant)
        except NoTaskAvailable:
            return
        while (item := first_pending(task)) is not None:
            listened(item)
            # Quiet clips: one word everybody marks; contested ones: a second word every other listener
            # marks, in the order the clip was handed out.
            handed_before = TaskItem.objects.filter(clip_id=item.clip_id, pk__lt=item.pk).count()
            chosen = (1, 2) if item.clip_id in contested and handed_before % 2 == 0 else (1,)
            annotation_submit(
                participant_id=participant.pk, item_id=item.pk, levels=marks(item, *chosen), mismatch=False
            )
            with lock:
                submitted.append(item.pk)

    # The first wave gives each clip 3 (12 x 3 = 36), settling the quiet ones; the second finds only
    # the saved budget left, and all of it claims at once.
    errors = run_in_threads(claim_and_submit, participants[:12])
    errors += run_in_threads(claim_and_submit, participants[12:])

    assert errors == []
    items = list(StudyItem.objects.filter(study=study))
    assert sum(item.completed_count for item in items) == len(submitted) <= CLIPS * TARGET
    assert all(item.completed_count <= MAXIMUM and item.reserved_count == 0 for item in items)
    assert all(item.completed_count == Annotation.objects.filter(clip_id=item.clip_id).count() for item in items)
    assert any(item.completed_count > TARGET for item in items)  # the savings were spent past the target
    pairs = list(TaskItem.objects.values_list("task__participant_id", "clip_id"))
    assert len(pairs) == len(set(pairs))
