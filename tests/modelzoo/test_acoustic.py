"""The acoustic baseline beats chance on synthetic emphasis, and saves as plain JSON."""

from dataclasses import replace

import numpy as np
import pytest

from modelzoo.training.config import AcousticConfig
from modelzoo.training.detectors.acoustic import AcousticDetector
from modelzoo.training.detectors.acoustic_features import FEATURES, clip_features
from modelzoo.training.detectors.base import prediction_rows
from modelzoo.training.metrics import score
from modelzoo.training.synthetic import synthetic_set

pytest.importorskip("parselmouth")


def test_emphasized_words_are_louder_higher_and_longer_in_the_features():
    clips = synthetic_set(20, seed=11)
    features = np.vstack([clip_features(clip) for clip in clips[:20]])
    emphasized = np.array([w.binary for clip in clips[:20] for w in clip.words], dtype=bool)
    assert features.shape[1] == len(FEATURES)
    for name in ("f0_mean_st", "intensity_mean_db", "duration_log_ratio"):
        column = features[:, FEATURES.index(name)]
        assert column[emphasized].mean() > column[~emphasized].mean(), name


def test_the_baseline_beats_the_majority_class():
    train = synthetic_set(50, seed=21)
    test = synthetic_set(30, seed=22)
    detector = AcousticDetector().fit(
        [c for c in train if c.split != "validation"], [c for c in train if c.split == "validation"], AcousticConfig()
    )
    metrics = score(prediction_rows(test, detector.predict(test)), resamples=200)["pooled"]
    labels = np.array([w.binary for clip in test for w in clip.words])
    majority = max(labels.mean(), 1 - labels.mean())
    assert metrics["accuracy"]["low"] > majority  # the whole interval above the majority baseline
    assert metrics["f1"]["value"] > 0.6 and metrics["pearson"]["value"] > 0.6
    assert sum(record["best"] for record in detector.history) == 2  # one C and one alpha chosen


def test_a_saved_baseline_is_json_and_predicts_the_same(tmp_path):
    clips = synthetic_set(20, seed=31)
    detector = AcousticDetector().fit(clips[:16], clips[16:18])
    detector.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["detector.json", "linear_models.json"]
    again = AcousticDetector.load(tmp_path)
    assert [p.binary for p in again.predict(clips[18:])] == [p.binary for p in detector.predict(clips[18:])]


def test_a_training_set_of_one_class_predicts_that_class():
    clips = [
        replace(clip, words=tuple(replace(w, binary=0) for w in clip.words)) for clip in synthetic_set(10, seed=41)
    ]
    detector = AcousticDetector().fit(clips[:8], clips[8:9])
    assert all(set(p.binary) == {0} for p in detector.predict(clips[9:]))
