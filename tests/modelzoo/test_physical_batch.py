"""The effective batch run as fewer, larger physical batches gives the updates of the accumulated
configured batches: the same weights after k updates on deterministic tiny models, the last
partial update of each epoch included. And how "auto" chooses, with the memory probe mocked."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from modelzoo.training.batching import micro_batches, physical_batch_choose  # noqa: E402
from modelzoo.training.config import FrameClassifierConfig, WhisperTokenConfig  # noqa: E402
from modelzoo.training.detectors.frame_classifier import FrameClassifierDetector  # noqa: E402
from modelzoo.training.detectors.whisper_tokens import WhisperTokenDetector  # noqa: E402
from modelzoo.training.synthetic import synthetic_clip  # noqa: E402
from tests.modelzoo.helpers import TINY_WAV2VEC2_DETERMINISTIC, TINY_WHISPER  # noqa: E402

CLIPS = 14  # batches of 2: 7 a epoch, so accumulation 3 ends each epoch with a partial update


def clips(count: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [synthetic_clip(rng, clip_id=f"p{seed}-{i}", words=2 + i % 5) for i in range(count)]


def trained(detector_class, backbone, config_class, checkpoint_dir, **config):
    detector = detector_class(backbone, checkpoint_dir)
    settings = {"device": "cpu", "epochs": 2, "learning_rate": 2e-3, "warmup_ratio": 0.25, "batch_size": 2}
    detector.fit(clips(CLIPS, 1), clips(2, 2), config_class(**settings, **config))
    return detector


@pytest.mark.parametrize(
    ("detector_class", "backbone", "config_class", "accumulation", "physical", "updates"),
    [
        # 7 batches of 2 an epoch, 3 to an update: 3 updates (3 + 3 + 1 batches); physical 6: 6, 6, 2 clips
        (FrameClassifierDetector, TINY_WAV2VEC2_DETERMINISTIC, FrameClassifierConfig, 3, 6, 6),
        # 2 to an update: 4 updates (2 + 2 + 2 + 1); physical 4: 4, 4, 4, 2 clips
        (WhisperTokenDetector, TINY_WHISPER, WhisperTokenConfig, 2, 4, 8),
    ],
)
def test_one_large_physical_batch_updates_as_the_accumulated_small_ones(
    checkpoint_dir, detector_class, backbone, config_class, accumulation, physical, updates
):
    settings = {"gradient_accumulation": accumulation}
    if detector_class is WhisperTokenDetector:
        settings["feature_cache"] = "off"  # the states from the backbone at every step, as a GPU run without room
    small = trained(detector_class, backbone, config_class, checkpoint_dir, physical_batch="off", **settings)
    large = trained(detector_class, backbone, config_class, checkpoint_dir, physical_batch=physical, **settings)
    assert (small.config.physical_batch, large.config.physical_batch) == (2, physical)  # what the run reports
    assert [r["updates"] for r in small.history] == [r["updates"] for r in large.history] == [updates // 2, updates]
    assert [r["loss"] for r in large.history] == pytest.approx([r["loss"] for r in small.history], rel=1e-5)
    fresh = detector_class(backbone, checkpoint_dir)
    fresh.build(config_class(device="cpu", batch_size=2))
    initial = fresh.model.state_dict()
    for name, weights in small.model.state_dict().items():
        torch.testing.assert_close(large.model.state_dict()[name], weights, rtol=1e-4, atol=1e-5)
    moved = [name for name, weights in small.model.state_dict().items() if not torch.equal(weights, initial[name])]
    assert any(name.startswith(("binary_head", "scalar_head")) for name in moved)  # it did train


def test_without_the_micro_batches_normalization_the_updates_would_differ(checkpoint_dir):
    """The merged batch is scored as its configured batches (each a mean over its own frames):
    one mean over all its frames gives other weights, which the test above would catch."""
    detector = FrameClassifierDetector(TINY_WAV2VEC2_DETERMINISTIC, checkpoint_dir)
    detector.build(FrameClassifierConfig(device="cpu", batch_size=2, gradient_accumulation=3, physical_batch=6))
    batch = next(iter(detector.loader(clips(6, 3), training=True)))
    detector.model.eval()
    with torch.no_grad():
        grouped = detector.loss(batch)
        detector.config = FrameClassifierConfig(device="cpu", batch_size=6, gradient_accumulation=1)
        pooled = detector.loss(batch)
    assert grouped.shape == (3,)
    assert pooled.shape == (1,) and float(pooled[0]) != pytest.approx(float(grouped.mean()), rel=1e-4)


def test_micro_batches_split_a_physical_batch_in_order():
    assert micro_batches(6, 2) == [slice(0, 2), slice(2, 4), slice(4, 6)]
    assert micro_batches(5, 2) == [slice(0, 2), slice(2, 4), slice(4, 5)]


CUDA = torch.device("cuda")  # a device object only: nothing runs on it


@pytest.mark.parametrize(
    ("setting", "accumulation", "device", "fitting", "chosen"),
    [
        ("auto", 3, CUDA, 24, 24),  # the whole effective batch fits
        ("auto", 4, CUDA, 20, 16),  # 32 does not, 16 (2 steps an update) does; 24 does not divide 32
        ("auto", 3, CUDA, 12, 8),  # nothing larger fits: MMEE's batch
        ("auto", 3, torch.device("cpu"), 24, 8),  # merged on CUDA only
        ("off", 3, CUDA, 24, 8),
        (16, 4, torch.device("cpu"), 0, 16),  # a number is taken as it is
        ("auto", 1, CUDA, 24, 8),  # nothing to merge
    ],
)
def test_auto_takes_the_largest_physical_batch_that_fits(setting, accumulation, device, fitting, chosen):
    config = FrameClassifierConfig(batch_size=8, gradient_accumulation=accumulation, physical_batch=setting)
    probed = []

    def fits(size):
        probed.append(size)
        return size <= fitting

    size, reason = physical_batch_choose(config, device, fits=fits)
    assert size == chosen and reason
    assert probed == sorted(probed, reverse=True)  # the largest first, and no probe past the first fit
    if not (setting == "auto" and device.type == "cuda" and accumulation > 1):
        assert probed == []


def test_a_physical_batch_must_be_made_of_whole_configured_batches():
    assert FrameClassifierConfig(batch_size=8, gradient_accumulation=3, physical_batch=24).batches_per_update == 1
    assert FrameClassifierConfig(batch_size=8, gradient_accumulation=4, physical_batch=16).batches_per_update == 2
    for bad in (12, 4, 48, "large", True):
        with pytest.raises(ValueError, match="physical_batch must be"):
            FrameClassifierConfig(batch_size=8, gradient_accumulation=3, physical_batch=bad)
