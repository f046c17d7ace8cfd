"""A launch's setting and parameters as the models to train, and the hyperparameters of each
label mode (modelzoo.plans: pure, no database)."""

import pytest

from modelzoo.plans import Plan, check_backbone, plan_settings, run_overrides

LANGUAGES = ["de", "en", "es"]
STEPS = [25, 50, 100]


def settings_of(plan: Plan) -> list[dict]:
    return plan_settings(plan, languages=LANGUAGES, scale_steps=STEPS)


def labels(settings: list[dict]) -> list[tuple]:
    return [(s["kind"], s["language"]) for s in settings]


def test_cross_lingual_trains_one_model_per_language_with_a_monolingual_diagonal():
    settings = settings_of(Plan("cross-lingual"))
    assert labels(settings) == [
        ("cross-lingual", "de"),
        ("cross-lingual", "en"),
        ("cross-lingual", "es"),
        ("monolingual", "de"),
        ("monolingual", "en"),
        ("monolingual", "es"),
    ]
    assert labels(settings_of(Plan("cross-lingual", languages=("en",), with_diagonal=False))) == [
        ("cross-lingual", "en")
    ]


def test_monolingual_defaults_to_every_trainable_language_and_reads_one_language_from_json():
    assert labels(settings_of(Plan("monolingual"))) == [("monolingual", code) for code in LANGUAGES]
    assert labels(settings_of(Plan.from_dict({"kind": "monolingual", "language": "es"}))) == [("monolingual", "es")]
    with pytest.raises(ValueError, match="no language of this set"):
        plan_settings(Plan("monolingual"), languages=[], scale_steps=STEPS)


def test_data_scale_trains_one_model_per_nested_step():
    assert [s["percent"] for s in settings_of(Plan("data-scale"))] == STEPS
    chosen = settings_of(Plan.from_dict({"kind": "data-scale", "percents": [10, 30], "language": "en"}))
    assert [(s["percent"], s["language"]) for s in chosen] == [(10, "en"), (30, "en")]
    assert [s["percent"] for s in settings_of(Plan.from_dict({"kind": "data-scale", "percent": 40}))] == [40]
    with pytest.raises(ValueError, match=r"percentages must be in \(0, 100\]"):
        Plan("data-scale", percents=(0, 50))


def test_cross_arousal_runs_both_directions_unless_one_is_given():
    both = settings_of(Plan("cross-arousal"))
    assert [(s["train_arousal"], s["test_arousal"]) for s in both] == [("high", "low"), ("low", "high")]
    one = settings_of(Plan("cross-arousal", train_arousal="low", test_arousal="high"))
    assert [(s["train_arousal"], s["test_arousal"]) for s in one] == [("low", "high")]
    with pytest.raises(ValueError, match="both train_arousal and test_arousal"):
        Plan("cross-arousal", train_arousal="low")


def test_multilingual_and_cross_dataset_are_one_model():
    assert labels(settings_of(Plan("multilingual", by="variety"))) == [("multilingual", "")]
    [setting] = settings_of(Plan("cross-dataset", language="en", test_language="de"))
    assert (setting["kind"], setting["language"], setting["test_language"]) == ("cross-dataset", "en", "de")


def test_unknown_kinds_and_parameters_are_refused():
    with pytest.raises(ValueError, match="unknown setting 'bilingual'"):
        Plan("bilingual")
    with pytest.raises(ValueError, match="unknown setting parameters: langauges"):
        Plan.from_dict({"kind": "monolingual", "langauges": ["en"]})


def test_a_label_mode_trains_one_head_and_selects_on_its_measure():
    assert run_overrides(detector="frame-classifier", label_mode="binary", overrides=None) == {
        "scalar_loss_weight": 0.0,
        "selection_measure": "f1",
    }
    scalar = run_overrides(detector="whisper-tokens", label_mode="scalar", overrides={"epochs": 3})
    assert scalar == {"binary_loss_weight": 0.0, "selection_measure": "pearson", "epochs": 3}
    assert run_overrides(detector="acoustic", label_mode="both", overrides={"selection_measure": "accuracy"}) == {
        "selection_measure": "accuracy"
    }


def test_hyperparameters_are_checked_against_the_detectors_configuration():
    with pytest.raises(ValueError, match="unknown settings for FrameClassifierConfig: epochz"):
        run_overrides(detector="frame-classifier", label_mode="binary", overrides={"epochz": 3})
    with pytest.raises(ValueError, match="the loss weights must be non-negative and not both 0"):
        run_overrides(detector="frame-classifier", label_mode="binary", overrides={"binary_loss_weight": 0})
    with pytest.raises(ValueError, match="unknown detector 'svm'"):
        run_overrides(detector="svm", label_mode="binary", overrides=None)


def test_backbone_names_stay_inside_the_checkpoint_folder():
    assert check_backbone("whisper-tokens", " tiny-whisper ") == "tiny-whisper"
    for name in ("/etc", "../outside", "a/../../b"):
        with pytest.raises(ValueError, match="inside the checkpoint folder"):
            check_backbone("frame-classifier", name)
    with pytest.raises(ValueError, match="no backbone"):
        check_backbone("acoustic", "xls-r-1b")
