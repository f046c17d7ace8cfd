"""Batches of both neural detectors come in a few shapes (length buckets), and a bucketed run
gives the predictions and scores of an unbucketed one, up to floating-point noise."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from modelzoo.training.benchmark import run_benchmark  # noqa: E402
from modelzoo.training.config import FrameClassifierConfig, WhisperTokenConfig  # noqa: E402
from modelzoo.training.detectors.frame_classifier import FrameClassifierDetector  # noqa: E402
from modelzoo.training.detectors.whisper_tokens import WhisperTokenDetector, features_to_window  # noqa: E402
from modelzoo.training.synthetic import synthetic_clip, synthetic_set, write_export_folder  # noqa: E402
from tests.modelzoo.helpers import QUICK, TINY_WAV2VEC2_DETERMINISTIC, TINY_WHISPER  # noqa: E402

BATCH = 4


def varied_clips(count: int = 24) -> list:
    """Clips of 2 to 9 words: about 1 to 4 seconds, and 6 to 25 tokens."""
    rng = np.random.default_rng(11)
    return [synthetic_clip(rng, clip_id=f"v{i}", words=2 + i % 8) for i in range(count)]


def epoch_shapes(loader, key: str) -> list[tuple]:
    return [tuple(batch[key].shape) for batch in loader]


def frame_detector(checkpoint_dir, **config) -> FrameClassifierDetector:
    detector = FrameClassifierDetector(TINY_WAV2VEC2_DETERMINISTIC, checkpoint_dir)
    detector.build(FrameClassifierConfig(device="cpu", batch_size=BATCH, eval_batch_size=BATCH, **config))
    return detector


def test_an_epoch_of_the_frame_classifier_has_one_shape_a_second_of_length(checkpoint_dir):
    clips = varied_clips()
    seconds = sorted({int(np.ceil(len(c.audio) / 16000)) for c in clips})
    assert seconds == [2, 3, 4]  # the clips span three one-second buckets
    bucketed = frame_detector(checkpoint_dir)
    for training in (True, False):
        shapes = epoch_shapes(bucketed.loader(clips, training=training), "input_values")
        assert len(shapes) == 6 and {rows for rows, _ in shapes} == {BATCH}
        # a batch's length is its longest clip's bucket: the longest of 4 clips is never under 2 s here
        assert {length for _, length in shapes} <= {32000, 48000, 64000}
        assert len(set(shapes)) <= 3
    plain = frame_detector(checkpoint_dir, length_bucket_seconds=None)
    assert len(set(epoch_shapes(plain.loader(clips, training=True), "input_values"))) == 6  # one a batch


def test_bucketed_frame_batches_keep_each_clips_frames_and_labels(checkpoint_dir):
    clips = varied_clips(8)
    bucketed = next(iter(frame_detector(checkpoint_dir).loader(clips, training=False)))
    plain = next(iter(frame_detector(checkpoint_dir, length_bucket_seconds=None).loader(clips, training=False)))
    assert torch.equal(bucketed["frames"], plain["frames"])
    frames, samples = plain["binary"].shape[1], plain["input_values"].shape[1]
    for key, width in (("binary", frames), ("scalar", frames), ("input_values", samples), ("attention_mask", samples)):
        assert torch.equal(bucketed[key][:, :width], plain[key])
    assert (bucketed["binary"][:, frames:] == -100).all() and (bucketed["attention_mask"][:, samples:] == 0).all()


def test_an_epoch_of_the_whisper_detector_has_few_token_lengths_and_one_window(checkpoint_dir):
    clips = varied_clips()
    detector = WhisperTokenDetector(TINY_WHISPER, checkpoint_dir)
    detector.build(WhisperTokenConfig(device="cpu", batch_size=BATCH, eval_batch_size=BATCH))
    for training in (True, False):
        batches = list(detector.loader(clips, training=training))
        tokens = {tuple(batch["decoder_input_ids"].shape) for batch in batches}
        assert len(batches) == 6 and tokens <= {(BATCH, 16), (BATCH, 32)}
        features = {tuple(batch["input_features"].shape) for batch in batches}  # cut: whole seconds of frames
        assert features <= {(BATCH, 80, 200), (BATCH, 80, 300)}
        windows = {
            tuple(features_to_window(b["input_features"], b["features_fill"], detector.model.window_frames).shape)
            for b in batches
        }
        assert windows == {(BATCH, 80, 300)}  # what the encoder reads: one shape
    plain = WhisperTokenDetector(TINY_WHISPER, checkpoint_dir)
    plain.build(WhisperTokenConfig(device="cpu", batch_size=BATCH, token_bucket=1))
    lengths = {batch["decoder_input_ids"].shape[1] for batch in plain.loader(clips, training=True)}
    assert len(lengths) > 2  # without buckets, one token length nearly every batch


@pytest.fixture(scope="module")
def varied_export(tmp_path_factory):
    """10 clips a language in en and de (of 4 to 7 words: 1.3 to 2.8 s), split 80/10/10."""
    return write_export_folder(tmp_path_factory.mktemp("varied"), synthetic_set(10, seed=21, languages=("en", "de")))


def benchmark(folder, checkpoint_dir, detector, backbone, **config) -> dict:
    return run_benchmark(
        folder=folder,
        detector=detector,
        backbone=backbone,
        checkpoint_dir=checkpoint_dir,
        setting={"kind": "multilingual"},
        config={**QUICK, "batch_size": BATCH, **config},
        resamples=20,
    )


def assert_same_results(one: dict, other: dict) -> None:
    assert [row["binary_pred"] for row in one["predictions"]] == [row["binary_pred"] for row in other["predictions"]]
    assert [row["scalar_pred"] for row in one["predictions"]] == pytest.approx(
        [row["scalar_pred"] for row in other["predictions"]], abs=1e-5
    )
    scores = {**one["metrics"]["by_language"], "pooled": one["metrics"]["pooled"]}
    for language, measures in scores.items():
        theirs = other["metrics"]["pooled"] if language == "pooled" else other["metrics"]["by_language"][language]
        for name in ("accuracy", "f1", "pearson"):
            for bound in ("value", "low", "high"):
                assert measures[name][bound] == pytest.approx(theirs[name][bound], abs=1e-5), (language, name)
    assert [r["loss"] for r in one["history"]] == pytest.approx([r["loss"] for r in other["history"]], rel=1e-4)


@pytest.mark.parametrize(
    ("detector", "backbone", "bucketed", "plain"),
    [
        (
            "frame-classifier",
            TINY_WAV2VEC2_DETERMINISTIC,
            {"length_bucket_seconds": 1.0},
            {"length_bucket_seconds": None},
        ),
        ("whisper-tokens", TINY_WHISPER, {"token_bucket": 16}, {"token_bucket": 1}),
    ],
)
def test_a_bucketed_run_predicts_and_scores_as_an_unbucketed_one(
    varied_export, checkpoint_dir, detector, backbone, bucketed, plain
):
    with_buckets = benchmark(varied_export, checkpoint_dir, detector, backbone, **bucketed)
    without = benchmark(varied_export, checkpoint_dir, detector, backbone, **plain)
    assert with_buckets["config"] | plain == without["config"]  # nothing else differs
    assert_same_results(with_buckets, without)
