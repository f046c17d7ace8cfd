"""Label sets: built by the worker from the report's annotations, finalized, frozen, versioned."""

from collections import Counter

import numpy as np
import pytest

from annotation.models import Participant
from annotation.participant_names import opaque_annotator_id
from annotation.selectors.study_data import study_data
from evaluation.models import LabelSet
from evaluation.reports.agreement import report_compute
from evaluation.selectors.label_sets import label_set_rows
from evaluation.services.label_sets import (
    LabelSetRefused,
    label_set_archive,
    label_set_create,
    label_set_default_parameters,
    label_set_delete,
    label_set_finalize,
)
from evaluation.stats.aggregation import SCORES
from evaluation.stats.selection import select_annotations
from tests.annotation.factories import AnnotationFactory, TaskFactory, TaskItemFactory
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return golden_study()


def built(study, django_capture_on_commit_callbacks, name="golden labels", **overrides) -> LabelSet:
    parameters = label_set_default_parameters(studies=[study], resamples=20, **overrides)
    with django_capture_on_commit_callbacks(execute=True):
        label_set = label_set_create(name=name, studies=[study], parameters=parameters)
    label_set.refresh_from_db()
    assert label_set.status == LabelSet.Status.SUCCEEDED, label_set.error
    return label_set


def test_labels_are_the_hand_count_of_the_kept_annotations(study, django_capture_on_commit_callbacks):
    label_set = built(study, django_capture_on_commit_callbacks, subsample=6)
    rows = list(label_set_rows(label_set_id=label_set.pk))

    assert [row["clip_id"] for row in rows] == sorted(row["clip_id"] for row in rows)
    for row in rows:
        assert len(row["annotators"]) == 6  # subsampled to the study's target
        for word in row["words"]:
            marked = sum(level >= 1 for level in word["levels"])
            assert word["binary"] == (2 * marked > len(word["levels"]))
            assert word["scalar"] == pytest.approx(np.mean([SCORES[level] for level in word["levels"]]))
    assert {"clip-03", "clip-10"} == {c["clip"] for c in label_set.summary["left_out"]["golden"]["clips_short"]}


def test_the_set_and_the_report_use_exactly_the_same_annotations(study, django_capture_on_commit_callbacks):
    label_set = built(study, django_capture_on_commit_callbacks, exclude_flagged=True)
    parameters = label_set.parameters
    data = study_data(study=study)
    report = report_compute(
        data, label_set_default_parameters(studies=[study], resamples=20, exclude_flagged=True).report_parameters(study)
    )
    selection = select_annotations(
        data,
        thresholds=label_set_default_parameters(studies=[study]).thresholds,
        exclude_flagged=True,
        n=parameters["subsample"],
        seed=parameters["seed"],
    )

    from_set = {
        (row["clip_id"], annotator, tuple(word["levels"][i] for word in row["words"]))
        for row in label_set_rows(label_set_id=label_set.pk)
        for i, annotator in enumerate(row["annotators"])
    }
    from_report = {
        (
            data.clip_keys[data.clip[i]],
            opaque_annotator_id("golden", data.annotator_keys[data.annotator[i]]),
            tuple(int(level) for level in data.levels[i, : data.clip_words[data.clip[i]]]),
        )
        for i in np.flatnonzero(selection.kept)
    }
    assert from_set == from_report
    assert len(from_set) == report["data"]["annotations_used"]
    assert report["annotators"]["excluded"]  # the flagged annotator really was left out of both
    assert label_set.summary["left_out"]["golden"]["annotators_excluded"]
    assert (
        label_set.summary["agreement"]["golden"]["pooled"]["fleiss"] == report["agreement"]["pooled"]["fleiss"]["value"]
    )


def test_splits_hold_every_clip_once_and_sizes_are_in_the_summary(study, django_capture_on_commit_callbacks):
    label_set = built(study, django_capture_on_commit_callbacks)
    rows = list(label_set_rows(label_set_id=label_set.pk))

    counts = Counter((row["language"], row["split"]) for row in rows)
    summary = label_set.summary["counts"]
    assert {(lang, split): n for lang, splits in summary.items() for split, n in splits.items()} == dict(counts)
    assert all(row["scale_step"] is not None for row in rows if row["split"] == "train")
    assert all(row["scale_step"] is None for row in rows if row["split"] != "train")
    assert {row["arousal"] for row in rows} <= {"high", "low", ""}


def test_a_final_set_never_changes_and_new_annotations_make_a_new_version(study, django_capture_on_commit_callbacks):
    label_set = label_set_finalize(label_set=built(study, django_capture_on_commit_callbacks))
    before = list(label_set_rows(label_set_id=label_set.pk))
    assert label_set.lifecycle == LabelSet.Lifecycle.FINAL and len(label_set.checksum) == 64 and label_set.code_version

    short_clip = study.items.get(clip__external_id="clip-03").clip
    for other in study.participants.exclude(annotations__clip=short_clip):  # clip-03 reaches 6 annotations
        AnnotationFactory(
            item=TaskItemFactory(task=TaskFactory(participant=other), clip=short_clip),
            levels=[1] + [0] * (short_clip.words.count() - 1),
        )

    assert list(label_set_rows(label_set_id=label_set.pk)) == before
    with pytest.raises(LabelSetRefused, match="already final"):
        label_set_finalize(label_set=label_set)
    newer = built(study, django_capture_on_commit_callbacks)
    assert (newer.name, newer.version) == (label_set.name, 2)
    assert "clip-03" in {row["clip_id"] for row in label_set_rows(label_set_id=newer.pk)}


def test_rejected_participants_are_left_out_and_counted(study, django_capture_on_commit_callbacks):
    rejected = study.participants.order_by("pk").first()
    Participant.objects.filter(pk=rejected.pk).update(decision=Participant.Decision.REJECTED)

    label_set = built(study, django_capture_on_commit_callbacks, subsample=None)

    ids = {a for row in label_set_rows(label_set_id=label_set.pk) for a in row["annotators"]}
    assert opaque_annotator_id("golden", rejected.prolific_pid) not in ids and len(ids) == 5
    notes = label_set.summary["left_out"]["golden"]["annotations_left_out_by_source"]
    assert (
        notes["annotations of rejected participants"]
        == rejected.annotations.filter(item__attention_check__isnull=True).count()
    )


def test_states_finalize_archive_delete(study, django_capture_on_commit_callbacks):
    draft = label_set_create(name="x", studies=[study], parameters=label_set_default_parameters(studies=[study]))
    with pytest.raises(LabelSetRefused, match="not built yet"):
        label_set_finalize(label_set=draft)
    with pytest.raises(LabelSetRefused, match="only a final label set can be archived"):
        label_set_archive(label_set=built(study, django_capture_on_commit_callbacks, name="y"))

    final = label_set_finalize(label_set=built(study, django_capture_on_commit_callbacks, name="z"))
    with pytest.raises(LabelSetRefused, match="archive it instead"):
        label_set_delete(label_set=final)
    assert label_set_archive(label_set=final).lifecycle == LabelSet.Lifecycle.ARCHIVED

    done_draft = built(study, django_capture_on_commit_callbacks, name="w")
    label_set_delete(label_set=done_draft)
    assert not LabelSet.objects.filter(pk=done_draft.pk).exists()


def test_only_emphasis_studies_and_a_name(study):
    with pytest.raises(LabelSetRefused, match="needs a name"):
        label_set_create(name=" ", studies=[study], parameters=label_set_default_parameters(studies=[study]))
    study.kind = study.Kind.LISTENING_FORM
    with pytest.raises(LabelSetRefused, match="emphasis studies; not: golden"):
        label_set_create(name="n", studies=[study], parameters=label_set_default_parameters(studies=[study]))


def test_the_readmes_angry_gets_an_arousal_and_unmapped_emotions_are_listed(study, django_capture_on_commit_callbacks):
    from annotation.models import Clip

    Clip.objects.filter(corpus=study.corpus, external_id="clip-00").update(emotion="neutral")
    label_set = built(study, django_capture_on_commit_callbacks)

    by_emotion = {row["emotion"]: row["arousal"] for row in label_set_rows(label_set_id=label_set.pk)}
    assert by_emotion == {"angry": "high", "happy": "high", "calm": "low", "neutral": ""}
    assert label_set.summary["emotions_without_arousal"] == {"neutral": 1}
