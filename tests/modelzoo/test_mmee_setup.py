"""MMEE's setup in both neural detectors: class-weighted cross-entropy in the frame classifier too,
random crops of long training clips (FrameClassifierConfig.max_seconds), fp16 with a gradient
scaler where a GPU has no bf16, and the package README naming the modules that exist."""

import itertools
import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from modelzoo.training.config import FrameClassifierConfig, WhisperTokenConfig  # noqa: E402
from modelzoo.training.data import Clip, Word  # noqa: E402
from modelzoo.training.detectors.frame_classifier import (  # noqa: E402
    FrameClassifierDetector,
    FrameDataset,
    FrameGeometry,
    frame_loss,
)
from modelzoo.training.loop import Trainer, choose_precision  # noqa: E402
from modelzoo.training.pooling import IGNORE  # noqa: E402
from tests.modelzoo.helpers import TINY_WAV2VEC2  # noqa: E402

GEOMETRY = FrameGeometry(kernels=(10, 3), strides=(5, 2))  # 10 samples a frame, 1600 frames a second


def test_the_frame_classifier_takes_class_weights_and_weighs_its_cross_entropy():
    config = FrameClassifierConfig().with_overrides({"class_weights": [1, 2.33]})  # as a launch's JSON gives it
    assert config.class_weights == (1.0, 2.33) == WhisperTokenConfig().class_weights
    torch.manual_seed(0)
    logits, scores = torch.randn(2, 5, 2), torch.rand(2, 5)
    binary = torch.tensor([[1, 0, 1, IGNORE, IGNORE], [0, 0, 1, 1, 0]])
    scalar = torch.where(binary == IGNORE, float(IGNORE), 0.5)
    weighted = frame_loss(logits, scores, binary, scalar, scalar_weight=0.0, class_weights=config.class_weights)
    real = binary != IGNORE
    expected = torch.nn.functional.cross_entropy(logits[real], binary[real], weight=torch.tensor([1.0, 2.33]))
    assert weighted.item() == pytest.approx(expected.item(), rel=1e-6)
    assert weighted.item() != pytest.approx(frame_loss(logits, scores, binary, scalar, scalar_weight=0.0).item())
    for bad in ([1.0], [1.0, 0.0], [1, "two"]):
        with pytest.raises(ValueError, match="class_weights must be two positive numbers"):
            FrameClassifierConfig().with_overrides({"class_weights": bad})


def test_the_detector_trains_with_the_weights_it_was_given(checkpoint_dir, monkeypatch):
    detector = FrameClassifierDetector(TINY_WAV2VEC2, checkpoint_dir)
    detector.build(FrameClassifierConfig(device="cpu", class_weights=(1.0, 2.33)))
    seen = []
    real_loss = frame_loss

    def recording(*args, **kwargs):
        seen.append(kwargs["class_weights"])
        return real_loss(*args, **kwargs)

    monkeypatch.setattr("modelzoo.training.detectors.frame_classifier.frame_loss", recording)
    words = (Word("a", 0.1, 0.4, 1, 1.0), Word("b", 0.5, 0.9, 0, 0.0))
    clip = Clip("c", "en", "train", words, samples=np.random.default_rng(0).normal(size=16000).astype(np.float32))
    detector.trainer(total_updates=1).step(next(iter(detector.loader([clip], training=True))))
    assert seen == [(1.0, 2.33)]


def _long_clip() -> Clip:
    words = (
        Word("one", 0.10, 0.40, 1, 1.0),
        Word("two", 0.55, 0.90, 0, 0.0),
        Word("three", 1.05, 1.60, 1, 0.5),
        Word("four", 1.80, 2.70, 0, 0.25),
    )
    samples = np.random.default_rng(1).normal(size=3 * 1600 * 10).astype(np.float32)  # 3 s at 16 kHz
    return Clip("long", "en", "train", words, samples=samples)


def test_training_clips_longer_than_max_seconds_are_cut_to_a_random_window_with_their_frames_labels():
    clip = _long_clip()
    whole = FrameDataset([clip], GEOMETRY, normalize=False)[0]
    cropped = FrameDataset([clip], GEOMETRY, normalize=False, max_seconds=1.0)
    torch.manual_seed(0)
    starts = set()
    for _ in range(12):
        item = cropped[0]
        assert len(item["audio"]) == 16000 and len(item["binary"]) == GEOMETRY.frames(16000)
        # where the window starts in the whole clip: a frame boundary (10 samples a frame)
        first = (
            next(
                s
                for s in range(0, len(clip.audio) - 16000 + 1, 10)
                if np.array_equal(clip.audio[s : s + 16000], item["audio"])
            )
            // 10
        )
        frames = len(item["binary"])
        assert np.array_equal(item["binary"], whole["binary"][first : first + frames])  # labels as in the whole clip
        assert np.array_equal(item["scalar"], whole["scalar"][first : first + frames])
        starts.add(first)
    assert len(starts) > 3  # a different window at each draw
    short = Clip("short", "en", "train", clip.words[:1], samples=clip.audio[:8000])
    assert len(FrameDataset([short], GEOMETRY, normalize=False, max_seconds=1.0)[0]["audio"]) == 8000


def test_max_seconds_crops_training_batches_only(checkpoint_dir):
    detector = FrameClassifierDetector(TINY_WAV2VEC2, checkpoint_dir)
    detector.build(FrameClassifierConfig(device="cpu", max_seconds=1.0))
    clip = _long_clip()
    [training] = detector.loader([clip], training=True)
    [evaluation] = detector.loader([clip], training=False)
    assert training["input_values"].shape[1] == 16000
    assert evaluation["input_values"].shape[1] == len(clip.audio)  # validation and test: whole clips
    assert len(detector.predict([clip])[0].binary) == len(clip.words)
    with pytest.raises(ValueError, match="max_seconds must be positive"):
        FrameClassifierConfig(max_seconds=0)


@pytest.mark.parametrize(
    ("setting", "device", "has_bf16", "chosen"),
    [
        ("auto", "cuda", True, "bf16"),
        ("auto", "cuda", False, "fp16"),
        ("auto", "cpu", False, "fp32"),
        ("fp16", "cuda", True, "fp16"),
        ("fp32", "cuda", True, "fp32"),
        ("bf16", "cpu", False, "bf16"),
    ],
)
def test_mixed_precision_is_bf16_where_the_gpu_has_it_and_fp16_where_not(setting, device, has_bf16, chosen):
    assert choose_precision(setting, torch.device(device), bf16_supported=lambda _: has_bf16) == chosen


def test_a_gpu_without_bf16_trains_in_fp16_with_a_gradient_scaler(monkeypatch):
    """The device's capability mocked: "auto" on a GPU without bf16 picks fp16, and the Trainer
    scales the loss, unscales before clipping and skips the step whose gradients overflow."""
    monkeypatch.setattr("modelzoo.training.loop.supports_bf16", lambda device: False)
    assert choose_precision("auto", torch.device("cuda")) == "fp16"
    monkeypatch.setattr("modelzoo.training.loop.choose_precision", lambda setting, device: "fp16")  # CPU stands in
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    overflow = {"on": False}

    def loss_of(batch):
        out = model(batch["x"]).float().pow(2).mean()
        return out * float("inf") if overflow["on"] else out

    trainer = Trainer(
        parameters=list(model.parameters()),
        loss_of=loss_of,
        config=FrameClassifierConfig(gradient_accumulation=1, warmup_ratio=0.0, learning_rate=0.1),
        device=torch.device("cpu"),
        total_updates=4,
    )
    assert trainer.precision == "fp16" and trainer.scaler.is_enabled()
    batch = {"x": torch.randn(4, 3)}
    before, scales = model.weight.detach().clone(), [trainer.scaler.get_scale()]
    while torch.equal(model.weight, before) and len(scales) < 40:  # the first scale (2**16) may overflow fp16
        trainer.step(batch)
        scales.append(trainer.scaler.get_scale())
    assert not torch.equal(model.weight, before)  # a finite step updates
    skipped = list(itertools.pairwise(scales))[:-1]  # the last step is the one that updated
    assert all(after == before / 2 for before, after in skipped)  # each skipped step halved the scale
    scale, updated = trainer.scaler.get_scale(), model.weight.detach().clone()
    overflow["on"] = True
    trainer.step(batch)
    assert torch.equal(model.weight, updated)  # the overflowing step is skipped ...
    assert trainer.scaler.get_scale() == scale / 2  # ... and the scale backs off


def test_detectors_saved_with_the_old_bf16_switch_still_load():
    assert FrameClassifierConfig().with_overrides({"bf16": True}).precision == "auto"
    assert FrameClassifierConfig().with_overrides({"bf16": False}).precision == "fp32"
    with pytest.raises(ValueError, match="precision must be one of"):
        FrameClassifierConfig(precision="fp8")


def test_the_package_readme_names_the_modules_that_exist():
    package = Path(__file__).resolve().parents[2] / "modelzoo" / "training"
    table = [line for line in (package / "README.md").read_text().splitlines() if line.startswith("| `")]
    named = {name for line in table for name in re.findall(r"`([a-z_]+\.py)`", line.split("|")[1])}
    assert "loop.py" in named and "training.py" not in named
    assert sorted(name for name in named if not (package / name).is_file()) == []
