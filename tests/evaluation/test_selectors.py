"""Rows of the database to report arrays; the annotations fingerprint."""

import pytest

from annotation.selectors.review import participant_review_rows
from annotation.selectors.study_data import annotations_fingerprint, study_data
from evaluation.services.agreement_reports import report_parameters
from evaluation.stats.quality import annotator_quality
from tests.annotation.factories import AnnotationFactory, ParticipantFactory, TaskFactory, TaskItemFactory
from tests.evaluation.builders import annotated_study, exclude_clip, golden_rows, golden_study

pytestmark = pytest.mark.django_db

CLIPS = {"a": (3, "en", "en-US", "calm"), "b": (2, "de", "de-AT", "angry"), "c": (2, "en", "en-GB", "calm")}


def small_study(**kwargs):
    annotations = [
        ("a", "p1", [1, 0, 0], True, 5.0),
        ("a", "p2", [1, 0, 2], False, 6.0),
        ("b", "p1", [0, 1], False, 4.0),
        ("b", "p2", [0, 1], True, 3.0),
        ("c", "p2", [0, 1], False, 2.0),
    ]
    return annotated_study(clips=CLIPS, annotations=annotations, checks=[("p1", True), ("p2", False)], **kwargs)


def test_arrays_of_a_study():
    data = study_data(study=small_study())

    assert data.clip_keys == ("a", "b", "c")
    assert data.clip_groups == {
        "language": ("en", "de", "en"),
        "variety": ("en-US", "de-AT", "en-GB"),
        "emotion": ("calm", "angry", "calm"),
    }
    assert data.clip_words.tolist() == [3, 2, 2]
    assert data.annotator_keys == ("p1", "p2")
    assert data.clip.tolist() == [0, 0, 1, 1, 2] and data.annotator.tolist() == [0, 1, 0, 1, 1]
    assert data.levels.tolist()[1] == [1, 0, 2] and data.levels.tolist()[2] == [0, 1, -1]
    assert data.mismatch.tolist() == [True, False, False, True, False]
    assert (data.check_annotator.tolist(), data.check_passed.tolist()) == ([0, 1], [True, False])
    assert data.notes == {}


def test_a_language_scope_keeps_its_clips_and_the_checks_of_its_annotators():
    data = study_data(study=small_study(), language="de")

    assert data.clip_keys == ("b",)
    assert data.n_annotations == 2 and data.check_annotator.size == 2


def test_excluded_clips_malformed_and_repeated_annotations_are_left_out_and_counted():
    study = small_study()
    exclude_clip(study, "c")
    participant = study.participants.get(prolific_pid="p1")
    task = TaskFactory(participant=participant)
    clip_a = study.items.get(clip__external_id="a").clip
    AnnotationFactory(item=TaskItemFactory(task=task, clip=clip_a), levels=[2, 2, 2])  # p1 again on a
    AnnotationFactory(item=TaskItemFactory(task=task, clip=clip_a, word_count=2), levels=[1, 0])  # wrong length

    data = study_data(study=study)

    assert data.clip_keys == ("a", "b")
    assert data.levels.tolist()[0] == [1, 0, 0]  # the first answer of p1 on a is kept
    assert data.notes == {
        "annotations of clips excluded in review": 1,
        "annotations whose levels do not match the clip's words": 1,
        "repeated annotations of a clip by the same participant (first kept)": 1,
    }


def test_participants_without_a_prolific_id_get_a_local_name():
    study = small_study()
    local = ParticipantFactory(study=study, prolific_pid="")
    clip = study.items.get(clip__external_id="b").clip
    AnnotationFactory(item=TaskItemFactory(task=TaskFactory(participant=local), clip=clip), levels=[1, 1])

    assert f"local-{local.pk}" in study_data(study=study).annotator_keys


def test_the_fingerprint_changes_with_new_annotations_and_exclusions():
    study = small_study()
    first = annotations_fingerprint(study=study)
    assert annotations_fingerprint(study=study) == first

    participant = study.participants.get(prolific_pid="p1")
    clip = study.items.get(clip__external_id="c").clip
    AnnotationFactory(item=TaskItemFactory(task=TaskFactory(participant=participant), clip=clip), levels=[0, 1])
    second = annotations_fingerprint(study=study)
    exclude_clip(study, "a")

    assert len({first, second, annotations_fingerprint(study=study)}) == 3


def test_report_flags_agree_with_the_participant_review_page():
    study = golden_study()
    thresholds = report_parameters(study=study).thresholds

    rows = annotator_quality(study_data(study=study), thresholds)

    review = {row.prolific_pid: row for row in participant_review_rows(study=study)}
    assert {row.annotator for row in rows} == set(review)
    for row in rows:
        assert row.flags == review[row.annotator].flags  # one set of thresholds, one set of names
        assert row.kappa == review[row.annotator].kappa
    assert any(row.flags for row in rows)
    assert len(golden_rows()[1]) == sum(row.clips for row in rows)


def test_rejected_participants_are_left_out_counted_and_change_the_fingerprint():
    from annotation.models import Participant
    from evaluation.reports.agreement import report_compute

    study = small_study()
    before = annotations_fingerprint(study=study)
    Participant.objects.filter(study=study, prolific_pid="p2").update(decision=Participant.Decision.REJECTED)

    data = study_data(study=study)

    assert data.annotator_keys == ("p1",) and data.n_annotations == 2 and data.check_annotator.tolist() == [0]
    assert data.notes == {"annotations of rejected participants": 3}
    assert annotations_fingerprint(study=study) != before
    report = report_compute(data, report_parameters(study=study, subsample=None, resamples=0))
    assert report["data"]["left_out_by_source"] == {"annotations of rejected participants": 3}
