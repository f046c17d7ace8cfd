"""The EmphaClass-like frame classifier: padding left out of the loss, frame labels from word
times, untimed clips refused or aligned, and one tiny benchmark run end to end."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from modelzoo.training.alignment import WordTimesMissing  # noqa: E402
from modelzoo.training.benchmark import run_benchmark  # noqa: E402
from modelzoo.training.config import FrameClassifierConfig  # noqa: E402
from modelzoo.training.data import Clip, Word, load_folder  # noqa: E402
from modelzoo.training.detectors import load_detector  # noqa: E402
from modelzoo.training.detectors.frame_classifier import (  # noqa: E402
    FrameClassifierDetector,
    FrameDataset,
    FrameGeometry,
    collate_frames,
    frame_loss,
)
from modelzoo.training.pooling import IGNORE  # noqa: E402
from tests.modelzoo.helpers import QUICK, TINY_WAV2VEC2  # noqa: E402


def test_padded_frames_are_left_out_of_both_losses():
    torch.manual_seed(0)
    logits, scores = torch.randn(2, 5, 2), torch.rand(2, 5)
    binary = torch.tensor([[1, 0, 1, IGNORE, IGNORE], [0, 0, 1, 1, 0]])
    scalar = torch.tensor([[0.9, 0.1, 0.7, IGNORE, IGNORE], [0.0, 0.2, 0.6, 0.8, 0.1]])
    loss = frame_loss(logits, scores, binary, scalar)

    real = binary != IGNORE
    expected_ce = torch.nn.functional.cross_entropy(logits[real], binary[real])
    expected_mse = ((scores[real] - scalar[real]) ** 2).mean()
    assert loss.item() == pytest.approx((expected_ce + expected_mse).item(), rel=1e-6)
    # whatever the model says on padding changes nothing
    logits[0, 3:], scores[0, 3:] = 100.0, 0.0
    assert frame_loss(logits, scores, binary, scalar).item() == pytest.approx(loss.item(), rel=1e-6)


def test_batches_pad_audio_with_zeros_and_labels_with_minus_100():
    geometry = FrameGeometry(kernels=(10, 3), strides=(5, 2))  # 10 samples a frame
    words = (Word("a", 0.0, 0.001, 1, 1.0),)
    short = Clip("s", "en", "train", words, samples=np.ones(400, dtype=np.float32))
    long = Clip("l", "en", "train", words, samples=np.ones(800, dtype=np.float32))
    dataset = FrameDataset([short, long], geometry, normalize=False)
    batch = collate_frames([dataset[0], dataset[1]], geometry)
    assert batch["frames"].tolist() == [geometry.frames(400), geometry.frames(800)] == [39, 79]
    assert batch["binary"].shape == (2, 79) and (batch["binary"][0, 39:] == IGNORE).all()
    assert (batch["scalar"][0, 39:] == IGNORE).all() and (batch["binary"][1] != IGNORE).all()
    assert batch["attention_mask"][0].sum() == 400 and (batch["input_values"][0, 400:] == 0).all()


def test_the_frame_count_matches_the_model(checkpoint_dir):
    detector = FrameClassifierDetector(TINY_WAV2VEC2, checkpoint_dir)
    model = detector.build(FrameClassifierConfig(device="cpu"))
    for samples in (16000, 23456):
        expected = model.backbone._get_feat_extract_output_lengths(torch.tensor(samples)).item()
        assert detector.geometry.frames(samples) == expected


def test_untimed_clips_of_other_languages_are_refused_with_a_reason(checkpoint_dir):
    untimed = Clip("de-1", "de", "train", (Word("Haus", None, None, 1, 1.0),), samples=np.zeros(16000, np.float32))
    detector = FrameClassifierDetector(TINY_WAV2VEC2, checkpoint_dir)
    with pytest.raises(WordTimesMissing, match=r"needs word times.*de-1 \(de\).*Whisper token detector"):
        detector.fit([untimed], [untimed], FrameClassifierConfig(device="cpu"))


def test_a_tiny_benchmark_run_end_to_end(export_folder, checkpoint_dir, tmp_path):
    phases = []
    result = run_benchmark(
        folder=export_folder,
        detector="frame-classifier",
        backbone=TINY_WAV2VEC2,
        checkpoint_dir=checkpoint_dir,
        setting={"kind": "monolingual", "language": "en"},
        config={**QUICK, "batch_size": 4},
        output_dir=tmp_path / "model",
        resamples=50,
        progress=lambda phase, done, total: phases.append(phase),
    )
    assert result["clips"] == {"train": 16, "validation": 2, "test": 2}
    assert result["config"]["learning_rate"] == 1e-3 and result["config"]["gradient_accumulation"] == 1
    assert [record["epoch"] for record in result["history"]] == [1, 2]
    assert sum(record["best"] for record in result["history"]) == 1
    assert any(phase.startswith("epoch 2/2: loss") for phase in phases)
    assert len(result["predictions"]) == 8 and set(result["metrics"]["by_language"]) == {"en"}

    reloaded = load_detector(tmp_path / "model")
    test_clips = [c for c in load_folder(export_folder) if c.split == "test" and c.language == "en"]
    again = reloaded.predict(test_clips)
    assert [p.binary for p in again] == [
        [row["binary_pred"] for row in result["predictions"] if row["clip_id"] == c.clip_id] for c in test_clips
    ]


def test_the_paper_batch_size_is_halved_for_multilingual_runs():
    from modelzoo.training.benchmark import run_config
    from modelzoo.training.experiments import Setting

    assert run_config("frame-classifier", Setting("multilingual"), None).batch_size == 4
    assert run_config("frame-classifier", Setting("monolingual", language="en"), None).batch_size == 8
    assert run_config("frame-classifier", Setting("multilingual"), {"batch_size": 2}).batch_size == 2
