"""The mismatch review of study items (annotation.services.study_item_review):
the reviewer's moves, and the reports' move made by the submission SQL."""

import pytest

from annotation.models import StudyItem
from annotation.services.assignment import assignment_claim
from annotation.services.study_item_review import (
    REVIEWER_MOVES,
    mismatch_sends_to_review,
    study_item_review_set,
)
from annotation.services.submission import annotation_submit
from tests.annotation.factories import StudyFactory, StudyItemFactory
from tests.annotation.study_helpers import first_pending, listened, live_study, marks, ready_participant

pytestmark = pytest.mark.django_db

Review = StudyItem.Review


def one_item_in_each_state() -> dict[str, StudyItem]:
    study = StudyFactory()
    return {state: StudyItemFactory(study=study, review=state) for state in Review.values}


def review_of(item: StudyItem) -> str:
    return StudyItem.objects.get(pk=item.pk).review


@pytest.mark.parametrize("target", [Review.CLEARED, Review.EXCLUDED])
def test_a_reviewer_moves_only_the_items_allowed_and_leaves_the_others(target):
    items = one_item_in_each_state()

    moved = study_item_review_set(items=StudyItem.objects.all(), state=target)

    allowed = REVIEWER_MOVES[target]
    assert moved == len(allowed)
    for state, item in items.items():
        assert review_of(item) == (target if state in allowed else state), state


def test_clearing_sends_reviewed_clips_back_but_never_exempts_an_active_one():
    items = one_item_in_each_state()

    study_item_review_set(items=StudyItem.objects.all(), state=Review.CLEARED)

    assert review_of(items[Review.NEEDS_REVIEW]) == Review.CLEARED
    assert review_of(items[Review.EXCLUDED]) == Review.CLEARED  # an exclusion can be undone
    assert review_of(items[Review.ACTIVE]) == Review.ACTIVE


def test_excluding_takes_any_clip_out_and_counts_only_those_that_moved():
    items = one_item_in_each_state()

    assert study_item_review_set(items=StudyItem.objects.all(), state=Review.EXCLUDED) == 3
    assert {review_of(item) for item in items.values()} == {Review.EXCLUDED}
    assert study_item_review_set(items=StudyItem.objects.all(), state=Review.EXCLUDED) == 0


def test_only_the_selected_items_move():
    items = one_item_in_each_state()

    study_item_review_set(items=StudyItem.objects.filter(pk=items[Review.ACTIVE].pk), state=Review.EXCLUDED)

    assert review_of(items[Review.ACTIVE]) == Review.EXCLUDED
    assert review_of(items[Review.CLEARED]) == Review.CLEARED


@pytest.mark.parametrize("state", [Review.ACTIVE, Review.NEEDS_REVIEW, "deleted"])
def test_a_reviewer_may_not_set_the_other_states(state):
    item = StudyItemFactory(review=Review.EXCLUDED)

    with pytest.raises(ValueError, match="A reviewer may set"):
        study_item_review_set(items=StudyItem.objects.all(), state=state)

    assert review_of(item) == Review.EXCLUDED


def test_the_rule_for_reports():
    assert not mismatch_sends_to_review(reports=1, threshold=2)
    assert mismatch_sends_to_review(reports=2, threshold=2)
    assert mismatch_sends_to_review(reports=3, threshold=2)


@pytest.mark.parametrize("threshold", [1, 3])
def test_the_submission_sql_follows_the_rule(threshold):
    """The hot path applies the rule inside its UPDATE: after every report the
    clip's state is what mismatch_sends_to_review says."""
    study = live_study(clips=1, clips_per_task=1, target_annotations=5, mismatch_threshold=threshold)
    for reports in range(1, threshold + 1):
        participant = ready_participant(study)
        item = first_pending(assignment_claim(participant=participant))
        listened(item)
        annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=marks(item, 1), mismatch=True)
        study_item = StudyItem.objects.get(study=study)
        expected = (
            Review.NEEDS_REVIEW if mismatch_sends_to_review(reports=reports, threshold=threshold) else Review.ACTIVE
        )
        assert (study_item.mismatch_count, study_item.review) == (reports, expected)


def test_reports_leave_a_cleared_clip_in_assignment():
    study = live_study(clips=1, clips_per_task=1, target_annotations=5, mismatch_threshold=1)
    StudyItem.objects.filter(study=study).update(review=Review.CLEARED, mismatch_count=1)
    participant = ready_participant(study)
    item = first_pending(assignment_claim(participant=participant))
    listened(item)

    annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=marks(item, 1), mismatch=True)

    study_item = StudyItem.objects.get(study=study)
    assert (study_item.mismatch_count, study_item.review) == (2, Review.CLEARED)
