"""The acoustic baseline: per-word pitch, intensity and duration relative to the clip
(acoustic_features), logistic regression for the binary label and ridge regression for the
scalar one, scikit-learn. Trains on a CPU in seconds; the floor every neural detector must beat.

The regularization strengths are chosen on the validation clips (its "best checkpoint"). The
fitted models are kept as plain numbers (feature means and scales, coefficients, intercepts) and
applied with numpy, so a saved detector is a JSON file, not a pickle.
"""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Self

import numpy as np

from modelzoo.training.alignment import ensure_word_times
from modelzoo.training.config import AcousticConfig
from modelzoo.training.data import Clip
from modelzoo.training.detectors.acoustic_features import FEATURES, clip_features
from modelzoo.training.detectors.base import (
    ClipPrediction,
    Detector,
    Progress,
    StopCheck,
    check_stop,
    prediction_rows,
    read_manifest,
    write_manifest,
)
from modelzoo.training.metrics import score, selection_value

MODEL_FILE = "linear_models.json"


class AcousticDetector(Detector):
    kind = "acoustic"
    config_class = AcousticConfig
    config: AcousticConfig

    def __init__(self, backbone: str | None = None, checkpoint_dir: Path | None = None):
        # no backbone: the signature matches the neural detectors so the benchmark builds any alike
        self.config = AcousticConfig()
        self.parameters: dict | None = None
        self.history: list[dict] = []

    def features(
        self,
        clips: Sequence[Clip],
        progress: Progress | None = None,
        should_stop: StopCheck | None = None,
        phase: str = "measuring prosody",
    ) -> list[np.ndarray]:
        rows = []
        for done, clip in enumerate(ensure_word_times(clips, needed_by="The acoustic baseline"), start=1):
            check_stop(should_stop)
            rows.append(clip_features(clip))
            if progress is not None:
                progress(phase, done, len(clips))
        return rows

    def fit(self, train, validation, config=None, progress=None, should_stop=None) -> Self:
        from sklearn.linear_model import LogisticRegression, Ridge
        from sklearn.preprocessing import StandardScaler

        self.config = config or self.config
        train, validation = list(train), list(validation)
        x = np.vstack(self.features(train, progress, should_stop, "measuring prosody: training clips"))
        binary = np.array([w.binary for clip in train for w in clip.words])
        scalar = np.array([w.scalar for clip in train for w in clip.words])
        validation_features = self.features(validation, progress, should_stop, "measuring prosody: validation clips")
        scaler = StandardScaler().fit(x)
        z = scaler.transform(x)
        classes = np.unique(binary)
        constant = int(classes[0]) if classes.size == 1 else None  # a training set of one class predicts it

        def value_on_validation(logistic, ridge, measure: str) -> float:
            self.parameters = _parameters(scaler, logistic, ridge, constant=constant)
            predictions = [self._predict_features(clip, rows) for clip, rows in zip(validation, validation_features)]
            return selection_value(score(prediction_rows(validation, predictions), resamples=0), measure)

        # each regularization strength is one candidate, as an epoch is for the neural detectors;
        # C is chosen on a binary measure, alpha on Pearson
        measure = self.config.selection_measure if self.config.selection_measure != "pearson" else "f1"
        ridge = Ridge(alpha=self.config.alpha_grid[0]).fit(z, scalar)
        logistics = (
            []
            if constant is not None
            else [LogisticRegression(C=c, max_iter=1000).fit(z, binary) for c in self.config.c_grid]
        )
        binary_values = [value_on_validation(model, ridge, measure) for model in logistics]
        logistic = logistics[int(np.argmax(binary_values))] if logistics else None
        ridges = [Ridge(alpha=alpha).fit(z, scalar) for alpha in self.config.alpha_grid]
        pearsons = [value_on_validation(logistic, model, "pearson") for model in ridges]
        ridge = ridges[int(np.argmax(pearsons))]
        check_stop(should_stop)
        self.parameters = _parameters(scaler, logistic, ridge, constant=constant)
        self.history = [
            *(
                {"C": c, f"validation {measure}": _defined(v), "best": model is logistic}
                for c, model, v in zip(self.config.c_grid, logistics, binary_values)
            ),
            *(
                {"alpha": a, "validation pearson": _defined(v), "best": model is ridge}
                for a, model, v in zip(self.config.alpha_grid, ridges, pearsons)
            ),
        ]
        return self

    def predict(self, clips, progress=None, should_stop=None) -> list[ClipPrediction]:
        if self.parameters is None:
            raise RuntimeError("the detector has not been trained or loaded")
        clips = list(clips)
        rows = self.features(clips, progress, should_stop, "predicting")
        return [self._predict_features(clip, features) for clip, features in zip(clips, rows)]

    def _predict_features(self, clip: Clip, features: np.ndarray) -> ClipPrediction:
        p = self.parameters
        if p is None:
            raise RuntimeError("the detector has not been trained or loaded")
        z = (features - np.array(p["mean"])) / np.array(p["scale"])
        if p["binary_coef"] is None:  # training had one class only
            binary = np.full(len(z), p["constant"])
        else:
            binary = (z @ np.array(p["binary_coef"]) + p["binary_intercept"] > 0).astype(int)
        scalar = np.clip(z @ np.array(p["scalar_coef"]) + p["scalar_intercept"], 0.0, 1.0)
        return ClipPrediction(clip.clip_id, binary.tolist(), scalar.tolist())

    def save(self, directory: Path) -> None:
        directory = Path(directory)
        write_manifest(directory, kind=self.kind, config=self.config, history=self.history)
        (directory / MODEL_FILE).write_text(json.dumps(self.parameters, indent=2) + "\n")

    @classmethod
    def load(cls, directory: Path, *, checkpoint_dir: Path | None = None) -> Self:
        manifest = read_manifest(directory, cls.kind)
        detector = cls()
        detector.config = AcousticConfig().with_overrides(manifest["config"])
        detector.history = manifest.get("history", [])
        detector.parameters = json.loads((Path(directory) / MODEL_FILE).read_text())
        return detector


def _parameters(scaler, logistic, ridge, *, constant: int | None) -> dict:
    return {
        "features": list(FEATURES),
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "binary_coef": None if logistic is None else logistic.coef_[0].tolist(),
        "binary_intercept": None if logistic is None else float(logistic.intercept_[0]),
        "constant": constant,
        "scalar_coef": ridge.coef_.tolist(),
        "scalar_intercept": float(ridge.intercept_),
    }


def _defined(value: float) -> float | None:
    """A validation measure for the history (stored as JSON, which has no NaN nor infinity): None
    where it is undefined (scored -inf for the choice), as the Pearson r of constant labels is (a
    binary-only set's scalar is all 0)."""
    return float(value) if np.isfinite(value) else None
