"""The kinds of study and their capabilities (annotation.study_kinds): every kind declares them, and
a study and the rules a submission reads both answer from that one declaration."""

import pytest
from django.core.exceptions import ValidationError

from annotation.models import Study
from annotation.sql.submission_rows import StudyRules
from annotation.study_kinds import CAPABILITIES, CAPABILITY_NAMES, Capabilities, capabilities_of, kinds_with


def test_every_kind_of_study_declares_its_capabilities():
    assert set(CAPABILITIES) == set(Study.Kind.values)
    assert all(isinstance(capabilities, Capabilities) for capabilities in CAPABILITIES.values())


def test_each_kind_stores_its_answers_one_way():
    for kind, capabilities in CAPABILITIES.items():
        shapes = [capabilities.answers_are_word_marks, capabilities.answers_are_choices]
        assert shapes.count(True) == 1, f"{kind}: its answers are word marks or choices, not both or neither"


def test_the_two_kinds_today():
    emphasis, form = capabilities_of(Study.Kind.EMPHASIS), capabilities_of(Study.Kind.LISTENING_FORM)
    assert emphasis.answers_are_word_marks and emphasis.adaptive_designs and not emphasis.checks_are_items
    assert form.answers_are_choices and form.checks_are_items and not form.adaptive_designs
    assert (emphasis.item_noun, emphasis.answer_noun) == ("clip", "annotation")
    assert (form.item_noun, form.answer_noun) == ("item", "answer")


def test_kinds_with_a_capability_are_the_kinds_declaring_it():
    assert kinds_with("answers_are_word_marks") == [Study.Kind.EMPHASIS]
    assert kinds_with("answers_are_choices") == [Study.Kind.LISTENING_FORM]
    assert kinds_with("checks_are_items") == [Study.Kind.LISTENING_FORM]
    assert kinds_with("adaptive_designs") == [Study.Kind.EMPHASIS]


def test_a_misspelt_or_non_yes_no_capability_is_refused():
    assert "item_noun" not in CAPABILITY_NAMES
    for name in ("answers_are_marks", "item_noun"):
        with pytest.raises(ValueError, match="unknown capability"):
            kinds_with(name)


def test_a_study_and_its_submission_rules_answer_from_the_declaration():
    for kind in Study.Kind.values:
        assert Study(kind=kind).capabilities is CAPABILITIES[kind]
        rules = StudyRules(1, "s", kind, "en", "en", "ltr", 0, None, 0.0, 0, Study.Adaptive.FIXED)
        assert rules.capabilities is CAPABILITIES[kind]


def test_adaptive_designs_are_refused_to_a_kind_without_them():
    study = Study(kind=Study.Kind.LISTENING_FORM, adaptive_mode=Study.Adaptive.EXACT, adaptive_max_per_clip=9)
    with pytest.raises(ValidationError) as refused:
        study.clean()
    assert "adaptive_mode" in refused.value.message_dict
