"""Every detector is declared once, in modelzoo.training.detector_table; the registry, the launch
checks (plans), the checkpoint folder's checks, the model's choices and its migrations, the
admin's launch form and the API all offer exactly the table's detectors, as the table says."""

import pytest
from django.db.migrations.loader import MigrationLoader

from modelzoo.api.benchmark_runs import BenchmarkLaunchSerializer, BenchmarkRunSerializer
from modelzoo.forms import BenchmarkLaunchForm
from modelzoo.models import BenchmarkRun
from modelzoo.plans import check_backbone, run_overrides
from modelzoo.training.checkpoints import DEFAULT_BACKBONES, FAMILIES, REGISTRY
from modelzoo.training.detector_table import DETECTORS, detector_spec

TABLE_CHOICES = [(spec.name, spec.label) for spec in DETECTORS.values()]


def test_the_models_choices_and_its_migrations_are_the_tables():
    assert BenchmarkRun.Detector.choices == TABLE_CHOICES
    assert [BenchmarkRun.Detector[spec.choice_name] for spec in DETECTORS.values()] == list(DETECTORS)
    assert BenchmarkRun._meta.get_field("detector").choices == TABLE_CHOICES
    migrated = MigrationLoader(None, ignore_no_migrations=True).project_state().apps
    assert migrated.get_model("modelzoo", "BenchmarkRun")._meta.get_field("detector").choices == TABLE_CHOICES


def test_the_admins_form_and_the_api_offer_the_tables_detectors():
    assert list(BenchmarkLaunchForm.base_fields["detector"].choices) == TABLE_CHOICES
    assert list(BenchmarkLaunchSerializer().fields["detector"].choices.items()) == TABLE_CHOICES
    assert list(BenchmarkRunSerializer().fields["detector"].choices.items()) == TABLE_CHOICES


def test_the_launch_checks_take_every_detector_with_its_configuration():
    for spec in DETECTORS.values():
        assert run_overrides(detector=spec.name, label_mode="both", overrides={"epochs": 2}) == {"epochs": 2}
        with pytest.raises(ValueError, match=f"unknown settings for {spec.config_class.__name__}"):
            run_overrides(detector=spec.name, label_mode="both", overrides={"epochz": 2})
        if spec.has_backbone:
            assert check_backbone(spec.name, "") == ""
        else:
            with pytest.raises(ValueError, match=f"the {spec.short_label} has no backbone"):
                check_backbone(spec.name, "xls-r-1b")
    with pytest.raises(ValueError, match="unknown detector 'svm'; one of acoustic, frame-classifier, whisper-tokens"):
        detector_spec("svm")


def test_each_backbone_default_is_a_registered_backbone_of_the_detectors_family():
    with_backbone = [spec for spec in DETECTORS.values() if spec.has_backbone]
    assert set(DEFAULT_BACKBONES) == set(FAMILIES) == {spec.name for spec in with_backbone}
    for spec in with_backbone:
        assert DEFAULT_BACKBONES[spec.name] == spec.default_backbone
        assert FAMILIES[spec.name] == REGISTRY[spec.default_backbone].family == spec.family
    assert all(spec.family is None for spec in DETECTORS.values() if not spec.has_backbone)


def test_only_a_detector_without_a_backbone_trains_on_the_cpu():
    # a neural detector's backbone wants a GPU; the acoustic baseline fits linear models on the CPU
    assert {spec.name for spec in DETECTORS.values() if not spec.needs_gpu} == {"acoustic"}
    assert all(spec.needs_gpu == spec.has_backbone for spec in DETECTORS.values())


def test_the_registry_builds_every_detector_of_the_table():
    pytest.importorskip("torch")
    from modelzoo.training.detectors import detector_class
    from modelzoo.training.detectors.neural import NeuralDetector

    for spec in DETECTORS.values():
        implementation = detector_class(spec.name)
        assert implementation.kind == spec.name
        assert implementation.config_class is spec.config_class
        # a neural detector loads the table's default backbone, of the table's family
        assert issubclass(implementation, NeuralDetector) == spec.has_backbone
        if spec.has_backbone:
            detector = implementation()
            assert (detector.backbone, detector.family) == (spec.default_backbone, spec.family)
            assert implementation("xls-r-300m").backbone == "xls-r-300m"
    with pytest.raises(ValueError, match="unknown detector 'svm'"):
        detector_class("svm")
