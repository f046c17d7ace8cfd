"""A label set of an adaptive study says which design it was and gives the selection effect in
numbers (its summary and data card), and lists the clips its exclusions leave unsettled; a set of
fixed designs says none of it (its card stays as it was: the golden export)."""

import numpy as np
import pytest

from annotation.models import Participant
from annotation.selectors.study_data import study_data
from evaluation.models import LabelSet
from evaluation.services.adaptive_disclosures import clips_not_settled
from evaluation.services.dataset_export_cards import label_set_card
from evaluation.services.dataset_export_files import Written
from evaluation.services.label_sets import label_set_create, label_set_default_parameters
from tests.annotation.test_adaptive_designs import run_study
from tests.annotation.test_adaptive_exclusions import annotate, exact_study, reject, six_of_six

pytestmark = pytest.mark.django_db


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
    reject(listeners[1])  # reopened: 4 of 4 kept against 8

    label_set = built(study, django_capture_on_commit_callbacks)

    key = study.items.get().clip.external_id
    assert label_set.summary["left_out"][study.slug]["clips_not_settled"] == [
        {"clip": key, "annotations": 6, "kept": 4}
    ]
    assert f"{study.slug}: 1 clip(s) not settled under this set's exclusions" in card(label_set)
    assert f"{key} (4 kept of 6)" in card(label_set)


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
    for _ in range(4):
        annotate(study)
    label_set = built(study, django_capture_on_commit_callbacks)
    assert label_set.summary["left_out"][study.slug]["clips_not_settled"] == []
    words = label_set.clips.get().words
    assert words[0]["binary"] is False  # 4 of 8 kept: the full design's label with the same exclusions
    assert Participant.objects.filter(study=study, decision=Participant.Decision.REJECTED).count() == 2
