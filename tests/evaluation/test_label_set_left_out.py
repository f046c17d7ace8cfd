"""A label set names every clip of its studies that it has no annotation of, and why (issue 33)."""

import pytest

from annotation.models import AttentionCheck, Clip
from evaluation.models import LabelSet
from evaluation.reports.export_cards import left_out_lines
from evaluation.services.label_sets import label_set_create, label_set_default_parameters
from tests.evaluation.builders import annotated_study

pytestmark = pytest.mark.django_db
PEOPLE = [f"{i:024x}" for i in range(1, 4)]


def test_a_clip_that_is_also_a_check_and_a_clip_nobody_annotated_are_named(django_capture_on_commit_callbacks):
    clips = dict.fromkeys(("c1", "c2", "check", "quiet"), (4, "en", "", ""))
    annotations = [(key, pid, [1, 0, 0, 0], False, 6.0) for key in ("c1", "c2") for pid in PEOPLE]
    study = annotated_study(clips=clips, annotations=annotations, target_annotations=3)
    # A study made before such checks were refused: one of its own clips is its attention check.
    AttentionCheck.objects.create(study=study, clip=Clip.objects.get(external_id="check"), expected={"0": 2})
    parameters = label_set_default_parameters(studies=[study], resamples=0)

    with django_capture_on_commit_callbacks(execute=True):
        label_set = label_set_create(name="named", studies=[study], parameters=parameters)
    label_set.refresh_from_db()

    assert label_set.status == LabelSet.Status.SUCCEEDED, label_set.error
    left = label_set.summary["left_out"]["golden"]
    assert left["clips_without_annotations"] == [
        {"clip": "check", "why": "an attention check of the study: never handed out as a clip to annotate"},
        {"clip": "quiet", "why": "no annotation that counts (not annotated yet, or only by rejected participants)"},
    ]
    assert "golden: clip check: an attention check of the study: never handed out as a clip to annotate" in (
        left_out_lines(label_set.summary["left_out"])
    )
