from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import StudyItem, Task, TaskItem
from annotation.services.assignment import NoTaskAvailable, assignment_claim, tasks_expire
from annotation.services.submission import annotation_submit
from tests.annotation.study_helpers import first_pending, listened, live_study, marks, ready_participant

pytestmark = pytest.mark.django_db


def submit_all(task, participant):
    for _ in range(task.items.count()):
        item = first_pending(task)
        listened(item)
        annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=marks(item, 0), mismatch=False)


def test_a_task_holds_distinct_clips_and_reserves_them():
    study = live_study(clips=6, clips_per_task=4)
    task = assignment_claim(participant=ready_participant(study))

    clips = list(task.items.values_list("clip_id", flat=True))
    assert len(clips) == len(set(clips)) == 4
    assert sorted(StudyItem.objects.filter(study=study).values_list("reserved_count", flat=True)) == [0, 0, 1, 1, 1, 1]
    assert task.expires_at > timezone.now()


def test_the_least_annotated_clips_come_first():
    study = live_study(clips=6, clips_per_task=3, target_annotations=5)
    first = assignment_claim(participant=ready_participant(study))
    second = assignment_claim(participant=ready_participant(study))

    assert not set(first.items.values_list("clip_id", flat=True)) & set(second.items.values_list("clip_id", flat=True))


def test_claiming_again_returns_the_open_task():
    study = live_study()
    participant = ready_participant(study)

    assert assignment_claim(participant=participant) == assignment_claim(participant=participant)
    assert Task.objects.count() == 1


def test_no_clip_goes_past_its_target_and_nobody_sees_a_clip_twice():
    study = live_study(clips=4, clips_per_task=2, target_annotations=2, allow_repeat_tasks=True)
    participants = [ready_participant(study) for _ in range(3)]
    for participant in participants:
        for _ in range(2):
            try:
                submit_all(assignment_claim(participant=participant), participant)
            except NoTaskAvailable:
                break

    for item in StudyItem.objects.filter(study=study):
        assert item.completed_count + item.reserved_count <= 2
    for participant in participants:
        seen = list(TaskItem.objects.filter(task__participant=participant).values_list("clip_id", flat=True))
        assert len(seen) == len(set(seen))
    assert sum(StudyItem.objects.values_list("completed_count", flat=True)) == 8


def test_only_live_studies_hand_out_work():
    study = live_study(status="paused")
    with pytest.raises(NoTaskAvailable, match="not open"):
        assignment_claim(participant=ready_participant(study))


def test_one_task_per_participant_unless_the_study_allows_more():
    study = live_study(clips=6, clips_per_task=2)
    participant = ready_participant(study)
    submit_all(assignment_claim(participant=participant), participant)

    with pytest.raises(NoTaskAvailable, match="already taken part"):
        assignment_claim(participant=participant)


def test_places_limit_the_tasks_handed_out():
    study = live_study(clips=6, clips_per_task=2, places=1)
    assignment_claim(participant=ready_participant(study))

    with pytest.raises(NoTaskAvailable, match="All places"):
        assignment_claim(participant=ready_participant(study))


def test_expired_tasks_release_unsubmitted_clips_but_keep_submitted_ones():
    study = live_study(clips=3, clips_per_task=3, target_annotations=1)
    participant = ready_participant(study)
    task = assignment_claim(participant=participant)
    item = first_pending(task)
    listened(item)
    annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=marks(item, 1), mismatch=False)

    assert tasks_expire(now=timezone.now() + timedelta(hours=2)) == 1

    task.refresh_from_db()
    assert task.status == Task.Status.EXPIRED
    counts = {si.clip_id: (si.completed_count, si.reserved_count) for si in StudyItem.objects.filter(study=study)}
    assert counts.pop(item.clip_id) == (1, 0)
    assert set(counts.values()) == {(0, 0)}
    other = assignment_claim(participant=ready_participant(study))
    assert item.clip_id not in set(other.items.values_list("clip_id", flat=True))
    assert other.items.count() == 2


def test_attention_checks_are_slipped_in():
    from annotation.models import AttentionCheck, Clip

    study = live_study(clips=5, clips_per_task=3, attention_checks_per_task=1)
    check_clip = Clip.objects.filter(corpus=study.corpus).last()
    AttentionCheck.objects.create(study=study, clip=check_clip, expected={"2": 2})

    task = assignment_claim(participant=ready_participant(study))

    assert task.items.count() == 4
    assert task.items.filter(attention_check__isnull=False).count() == 1
    clips = list(task.items.values_list("clip_id", flat=True))
    assert len(set(clips)) == 4
