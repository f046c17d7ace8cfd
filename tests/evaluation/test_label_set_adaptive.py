"""A label set of an adaptive study says which design it was and gives the selection effect in
numbers (its summary and data card), and lists the clips its exclusions leave unsettled; a set of
fixed designs says none of it (its card stays as it was: the golden export)."""

import numpy as np
import pytest

from annotation.models import Participant, Study, StudyItem
from annotation.selectors.study_data import study_data
from annotation.services.assignment import assignment_claim
from annotation.services.review import participant_decide
from annotation.services.submission import annotation_submit
from evaluation.models import LabelSet
from evaluation.services.adaptive_disclosures import clips_not_settled
from evaluation.services.dataset_export_cards import label_set_card
from evaluation.services.dataset_export_files import Written
from evaluation.services.label_sets import label_set_create, label_set_default_parameters
from tests.annotation.study_helpers import first_pending, listened, live_study, marks, ready_participant
from tests.annotation.test_adaptive_designs import run_study

pytestmark = pytest.mark.django_db

TARGET = 10
MESSAGE = "You marked every clip the same way without listening to it, as the playback records show. " * 2


def exact_study(**settings) -> Study:
    """One clip, target 10, exact stopping."""
    settings = {"target_annotations": TARGET, "adaptive_mode": Study.Adaptive.EXACT, "min_marked_words": 0, **settings}
    return live_study(clips=1, clips_per_task=1, **settings)


def annotate(study: Study, *marked: int) -> Participant:
    """A new participant claims the study's clip and submits with these words marked."""
    participant = ready_participant(study)
    item = first_pending(assignment_claim(participant=participant))
    listened(item)
    annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=marks(item, *marked), mismatch=False)
    return participant


def reject(participant: Participant) -> None:
    participant_decide(
        participant=participant, decision=Participant.Decision.REJECTED, note=MESSAGE, category="FAILED_CHECK"
    )


def six_of_six(study: Study) -> list[Participant]:
    """Six listeners mark the first word: exact stopping settles the clip at 6 of 10."""
    listeners = [annotate(study, 0) for _ in range(6)]
    assert StudyItem.objects.get(study=study).settled
    return listeners


def built(study, django_capture_on_commit_callbacks, **overrides) -> LabelSet:
    parameters = label_set_default_parameters(studies=[study], resamples=20, **overrides)
    with django_capture_on_commit_callbacks(execute=True):
        label_set = label_set_create(name="adaptive labels", studies=[study], parameters=parameters)
    label_set.refresh_from_db()
    assert label_set.status == LabelSet.Status.SUCCEEDED, label_set.error
    return label_set


def card(label_set: LabelSet) -> str:
    return label_set_card(label_set=label_set, export_format="jsonl", written=Written(files="clips.jsonl"))


def test_the_set_and_its_card_give_the_design_and_the_selection_effect(django_capture_on_commit_callbacks):
    study, _ = run_study(adaptive_mode="exact")
    label_set = built(study, django_capture_on_commit_callbacks)

    section = label_set.summary["adaptive_design"][study.slug]
    effect = section["selection_effect"]
    assert section["mode"] == "exact" and section["clips"]["stopped_early"] == 3
    assert effect["kappa_all_clips"] == section["agreement"]["all_clips"]["fleiss_kappa"]
    assert effect["kappa_clips_at_target"] < effect["kappa_all_clips"]
    assert effect["kappa_fixed_design_replicated"] is not None
    assert label_set.summary["left_out"][study.slug]["clips_not_settled"] == []
    text = card(label_set)
    assert f"**adaptive design ({study.slug})**: exact stopping" in text and "3 clip(s) stopped early" in text
    assert f"**selection effect ({study.slug})**: Fleiss' kappa over all clips {effect['kappa_all_clips']:.4f}" in text
    assert "replicated by the study designer from the study's annotations" in text
    assert f"{effect['kappa_fixed_design_replicated']:.4f}" in text


def test_a_fixed_designs_set_says_nothing_of_adaptive_designs(django_capture_on_commit_callbacks):
    study, _ = run_study()
    label_set = built(study, django_capture_on_commit_callbacks)
    assert "adaptive_design" not in label_set.summary
    assert "clips_not_settled" not in label_set.summary["left_out"][study.slug]
    assert "adaptive design" not in card(label_set) and "selection effect" not in card(label_set)


def test_a_set_built_while_a_reopened_clip_waits_for_listeners_lists_it(django_capture_on_commit_callbacks):
    study = exact_study()
    listeners = six_of_six(study)
    reject(listeners[0])
    reject(listeners[1])  # their places freed (annotation.services.review): 4 of 4 kept, reopened

    label_set = built(study, django_capture_on_commit_callbacks)

    key = study.items.get().clip.external_id
    assert label_set.summary["left_out"][study.slug]["clips_not_settled"] == [
        {"clip": key, "annotations": 4, "kept": 4}
    ]
    assert f"{study.slug}: 1 clip(s) not settled under this set's exclusions" in card(label_set)
    assert f"{key} (4 kept of 4)" in card(label_set)


def test_a_sets_own_exclusions_unsettle_a_clip_the_study_still_counts_as_settled():
    """Annotators a set leaves out (flagged, failing checks) that the study's design still counts:
    the set judges the clip on its kept annotations and reports it, though the study holds it settled."""
    study = exact_study()
    six_of_six(study)
    data = study_data(study=study)
    everyone = np.ones(data.n_annotations, dtype=bool)
    assert clips_not_settled(study=study, data=data, kept=everyone) == []
    first_two = [data.annotator_keys.index(key) for key in sorted(data.annotator_keys)[:2]]
    kept = ~np.isin(data.annotator, first_two)
    key = data.clip_keys[0]
    assert clips_not_settled(study=study, data=data, kept=kept) == [{"clip": key, "annotations": 6, "kept": 4}]
    assert study.items.get().settled  # the live design has not been told: nothing excluded there


def test_a_clip_filled_again_after_the_rejections_is_settled_in_the_set(django_capture_on_commit_callbacks):
    study = exact_study()
    listeners = six_of_six(study)
    reject(listeners[0])
    reject(listeners[1])
    for _ in range(5):  # the rejected work's places are handed out again
        annotate(study)
    assert study.items.get().settled  # 4 of 9: a tenth listener cannot make it a majority
    label_set = built(study, django_capture_on_commit_callbacks)
    assert label_set.summary["left_out"][study.slug]["clips_not_settled"] == []
    words = label_set.clips.get().words
    assert words[0]["binary"] is False  # the full design's label, the rejected work replaced
    assert Participant.objects.filter(study=study, decision=Participant.Decision.REJECTED).count() == 2
