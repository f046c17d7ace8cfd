"""Every gate is checked on the server, whatever the page sends."""

import pytest

from annotation.models import Annotation, AttentionCheck, Clip, Participant, PlaybackEvent, StudyItem, Task, TaskItem
from annotation.services.assignment import assignment_claim
from annotation.services.submission import SubmissionRefused, annotation_submit, max_marks, playback_record
from tests.annotation.study_helpers import first_pending, listened, live_study, marks, ready_participant

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    study = live_study(clips=4, clips_per_task=3)
    participant = ready_participant(study)
    task = assignment_claim(participant=participant)
    return study, participant, task


def submit(participant, item, levels, mismatch=False):
    return annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=levels, mismatch=mismatch)


def refused(participant, item, levels, mismatch=False) -> SubmissionRefused:
    with pytest.raises(SubmissionRefused) as caught:
        submit(participant, item, levels, mismatch)
    return caught.value


def test_a_listened_clip_with_valid_marks_is_stored(setup):
    study, participant, task = setup
    item = first_pending(task)
    listened(item)

    result = submit(participant, item, marks(item, 2, level=2))

    annotation = Annotation.objects.get()
    assert annotation.levels == marks(item, 2, level=2) and annotation.coverage == pytest.approx(1.0)
    assert annotation.seconds_spent >= item.duration
    assert not result.duplicate and not result.task_completed
    study_item = StudyItem.objects.get(study=study, clip_id=item.clip_id)
    assert (study_item.completed_count, study_item.reserved_count) == (1, 0)


def test_unlistened_clip_is_refused(setup):
    _, participant, task = setup
    item = first_pending(task)

    assert "Listen to the whole clip first (played so far: 0 %)." in refused(participant, item, marks(item, 1)).reasons
    assert not Annotation.objects.exists()


@pytest.mark.parametrize("levels", [[], [0] * 10, [2] * 10])  # the wrong shape, too few marks, too many
def test_reports_sent_with_a_refused_answer_are_kept(setup, levels):
    _, participant, task = setup
    item = first_pending(task)
    reports = [{"kind": "play", "t": 0, "rate": 1, "at": 0}, {"kind": "pause", "t": 0.5, "rate": 1, "at": 500}]

    with pytest.raises(SubmissionRefused):
        annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=levels, mismatch=False, events=reports)

    assert list(PlaybackEvent.objects.filter(item=item).values_list("kind", flat=True)) == ["play", "pause"]
    assert not Annotation.objects.exists()


def test_seek_passed_off_as_listening_is_refused(setup):
    _, participant, task = setup
    item = first_pending(task)
    playback_record(
        item=item,
        events=[
            {"kind": "play", "t": 0, "rate": 1, "at": 0},
            {"kind": "seeking", "t": 1.9, "rate": 1, "at": 10},
            {"kind": "seeked", "t": 1.9, "rate": 1, "at": 20},
            {"kind": "timeupdate", "t": 2.0, "rate": 1, "at": 120},
            {"kind": "ended", "t": 2.0, "rate": 1, "at": 130},
        ],
    )

    assert any("Listen to the whole clip" in reason for reason in refused(participant, item, marks(item, 1)).reasons)


def test_listening_too_quickly_is_refused(setup):
    _, participant, task = setup
    item = first_pending(task)
    # The page claims a full play-through, but the server received it all at once.
    events = [{"kind": "play", "t": 0, "rate": 1, "at": 0}]
    events += [{"kind": "timeupdate", "t": t / 4, "rate": 1, "at": t * 250} for t in range(1, 9)]
    events += [{"kind": "ended", "t": 2.0, "rate": 1, "at": 2000}]
    playback_record(item=item, events=events)

    assert refused(participant, item, marks(item, 1)).reasons


@pytest.mark.parametrize(
    ("levels", "reason"),
    [
        ([0] * 10, "Mark at least 1 word as emphasized."),
        ([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], "Mark at most 3 of the 10 words."),
        ([1] + [0] * 8, "Give one level (0, 1 or 2) for each of the 10 words."),
        ([1] + [0] * 10, "Give one level (0, 1 or 2) for each of the 10 words."),
        ([3] + [0] * 9, "Give one level (0, 1 or 2) for each of the 10 words."),
        ([True] + [0] * 9, "Give one level (0, 1 or 2) for each of the 10 words."),
    ],
)
def test_marks_are_checked(setup, levels, reason):
    _, participant, task = setup
    item = first_pending(task)
    listened(item)

    assert reason in refused(participant, item, levels).reasons


def test_short_clips_still_allow_the_minimum():
    assert max_marks(word_count=3, min_marked=1, max_fraction=0.3) == 1
    assert max_marks(word_count=10, min_marked=1, max_fraction=0.3) == 3
    assert max_marks(word_count=20, min_marked=1, max_fraction=0.3) == 6


def test_another_participants_item_is_not_found(setup):
    study, _participant, task = setup
    other = ready_participant(study)
    item = first_pending(task)
    listened(item)

    with pytest.raises(TaskItem.DoesNotExist):
        submit(other, item, marks(item, 1))


def test_skipping_ahead_is_refused(setup):
    _, participant, task = setup
    later = task.items.order_by("position")[1]
    listened(later)

    assert refused(participant, later, marks(later, 1)).reasons == [
        "Clips must be annotated in order; this is not the current clip."
    ]


def test_a_repeated_post_returns_the_stored_answer_and_writes_nothing(setup):
    _, participant, task = setup
    item = first_pending(task)
    listened(item)
    first = submit(participant, item, marks(item, 1))

    again = submit(participant, item, marks(item, 1))

    assert again.duplicate and again.annotation.pk == first.annotation.pk
    assert Annotation.objects.count() == 1
    assert StudyItem.objects.get(clip_id=item.clip_id, study=task.study).completed_count == 1


def test_a_changed_answer_for_a_submitted_clip_is_refused(setup):
    _, participant, task = setup
    item = first_pending(task)
    listened(item)
    submit(participant, item, marks(item, 1))

    error = refused(participant, item, marks(item, 2))

    assert error.final and Annotation.objects.get().levels == marks(item, 1)


def test_expired_task_refuses_submissions(setup):
    _, participant, task = setup
    Task.objects.filter(pk=task.pk).update(expires_at=task.created_at)
    item = first_pending(task)
    listened(item)

    assert refused(participant, item, marks(item, 1)).reasons == ["This task is closed: its time limit has passed."]


def test_finishing_every_clip_completes_task_and_participant_once(setup):
    _, participant, task = setup
    for _ in range(3):
        item = first_pending(task)
        listened(item)
        result = submit(participant, item, marks(item, 0))

    assert result.task_completed
    task.refresh_from_db()
    participant.refresh_from_db()
    assert task.status == Task.Status.COMPLETED and participant.completed_at is not None
    completed_at = participant.completed_at
    submit(participant, item, marks(item, 0))
    participant.refresh_from_db()
    assert participant.completed_at == completed_at


def test_mismatch_reports_take_a_clip_out_for_review():
    from annotation.services.assignment import NoTaskAvailable

    study = live_study(clips=1, clips_per_task=1, target_annotations=5, mismatch_threshold=2)
    for reports in (1, 2):
        participant = ready_participant(study)
        item = first_pending(assignment_claim(participant=participant))
        listened(item)
        submit(participant, item, marks(item, 1), mismatch=True)
        study_item = StudyItem.objects.get(study=study)
        assert study_item.mismatch_count == reports

    assert study_item.review == StudyItem.Review.NEEDS_REVIEW
    with pytest.raises(NoTaskAvailable):
        assignment_claim(participant=ready_participant(study))


def test_attention_check_results_are_recorded():
    study = live_study(clips=3, clips_per_task=1, attention_checks_per_task=1)
    check_clip = Clip.objects.filter(corpus=study.corpus).last()
    AttentionCheck.objects.create(study=study, clip=check_clip, expected={"4": 2})
    participant = ready_participant(study)
    task = assignment_claim(participant=participant)

    results = []
    for _ in range(2):
        item = first_pending(task)
        listened(item)
        submit(participant, item, marks(item, 4, level=2) if item.attention_check_id else marks(item, 0))
        results.append(item.annotation.attention_passed if item.attention_check_id else "clip")
    assert sorted(results, key=str) == [True, "clip"]
    assert Participant.objects.get(pk=participant.pk).completed_at is not None


@pytest.mark.parametrize(
    "events",
    [
        {"kind": "play"},
        [{"kind": "explode", "t": 0, "rate": 1, "at": 0}],
        [{"kind": "play", "t": -1, "rate": 1, "at": 0}],
        [{"kind": "play", "t": 0, "rate": 0, "at": 0}],
        [{"kind": "play", "t": "0", "rate": 1, "at": 0}],
        [{"kind": "play", "t": 0, "rate": 1, "at": 0}] * 201,
    ],
)
def test_malformed_playback_reports_are_refused(setup, events):
    _, _, task = setup
    with pytest.raises(ValueError):
        playback_record(item=first_pending(task), events=events)
