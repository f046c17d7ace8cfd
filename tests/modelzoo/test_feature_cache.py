"""The Whisper detector's feature cache: the frozen backbone's states of each training and
validation clip computed once per run, and a run from them identical to one that runs Whisper at
every step (tiny model, CPU)."""

import pytest

torch = pytest.importorskip("torch")

from modelzoo.training.benchmark import run_benchmark  # noqa: E402
from modelzoo.training.config import WhisperTokenConfig  # noqa: E402
from modelzoo.training.detectors import whisper_tokens  # noqa: E402
from modelzoo.training.detectors.whisper_tokens import WhisperTokenDetector  # noqa: E402
from tests.modelzoo.helpers import QUICK, TINY_WHISPER  # noqa: E402


def benchmark(export_folder, checkpoint_dir, **config) -> dict:
    return run_benchmark(
        folder=export_folder,
        detector="whisper-tokens",
        backbone=TINY_WHISPER,
        checkpoint_dir=checkpoint_dir,
        setting={"kind": "multilingual"},
        config={**QUICK, "batch_size": 4, "eval_batch_size": 4, **config},
        resamples=50,
    )


def counting_features(monkeypatch) -> list:
    """Records the clip of every log-mel the detector computes."""
    seen = []
    original = whisper_tokens.TokenDataset.__getitem__

    def getitem(self, index):
        seen.append(self.clips[index].clip_id)
        return original(self, index)

    monkeypatch.setattr(whisper_tokens.TokenDataset, "__getitem__", getitem)
    return seen


def test_a_run_from_cached_states_is_the_run_that_computes_them_at_every_step(
    export_folder, checkpoint_dir, monkeypatch
):
    seen = counting_features(monkeypatch)
    uncached = benchmark(export_folder, checkpoint_dir, feature_cache="off")
    features_uncached, seen[:] = len(seen), []
    cached = benchmark(export_folder, checkpoint_dir, feature_cache="host")
    assert (uncached["config"]["feature_cache"], cached["config"]["feature_cache"]) == ("off", "host")
    clips = cached["clips"]
    # once per clip (training and validation), then the test clips; without: every epoch, every clip
    assert len(seen) == clips["train"] + clips["validation"] + clips["test"]
    assert features_uncached == 2 * (clips["train"] + clips["validation"]) + clips["test"]  # QUICK: 2 epochs
    cache = cached["runtime"]["feature_cache"]
    assert cache["clips"] == clips["train"] + clips["validation"] and cache["place"] == "host"
    # tiny Whisper: 150 encoder positions of 64 float32 values a clip, and the transcript's tokens
    assert 150 * 64 * 4 * cache["clips"] < cache["bytes"] < (150 + 64) * 64 * 4 * cache["clips"]

    for one, other in zip(uncached["history"], cached["history"]):
        assert one["loss"] == pytest.approx(other["loss"], rel=1e-5)
        assert one["validation"] == pytest.approx(other["validation"], abs=5e-6)
        assert one["best"] == other["best"]
    assert [r["binary_pred"] for r in uncached["predictions"]] == [r["binary_pred"] for r in cached["predictions"]]
    assert [r["scalar_pred"] for r in uncached["predictions"]] == pytest.approx(
        [r["scalar_pred"] for r in cached["predictions"]], abs=1e-5
    )
    for name in ("accuracy", "f1", "pearson"):
        assert uncached["metrics"]["pooled"][name] == pytest.approx(cached["metrics"]["pooled"][name], abs=1e-5)


def detector_with(checkpoint_dir, **config) -> WhisperTokenDetector:
    detector = WhisperTokenDetector(TINY_WHISPER, checkpoint_dir)
    detector.build(WhisperTokenConfig(device="cpu", **config))
    return detector


def test_auto_caches_where_the_states_fit_and_only_when_clips_come_back(checkpoint_dir, monkeypatch):
    assert detector_with(checkpoint_dir, epochs=2).feature_cache_place(100, 10)[0] == "host"  # the CPU's memory
    place, reason = detector_with(checkpoint_dir, epochs=1).feature_cache_place(100, 10)
    assert place == "off" and "once" in reason
    assert detector_with(checkpoint_dir, epochs=3, max_steps=10).feature_cache_place(100, 10)[0] == "off"
    assert detector_with(checkpoint_dir, epochs=3, max_steps=11).feature_cache_place(100, 10)[0] == "host"
    assert detector_with(checkpoint_dir, epochs=1, feature_cache="host").feature_cache_place(100, 10)[0] == "host"
    assert detector_with(checkpoint_dir, feature_cache="device").feature_cache_place(100, 10)[0] == "host"  # no GPU
    monkeypatch.setattr(whisper_tokens, "available_host_bytes", lambda: 10**6)
    place, reason = detector_with(checkpoint_dir, epochs=2).feature_cache_place(100, 10)
    assert place == "off" and "fits neither" in reason
    with pytest.raises(ValueError, match="feature_cache must be one of"):
        WhisperTokenConfig(feature_cache="disk")


def test_the_validation_clips_are_predicted_from_the_cache_and_others_from_their_features(checkpoint_dir):
    from modelzoo.training.synthetic import synthetic_set

    clips = synthetic_set(6, seed=31)
    detector = detector_with(checkpoint_dir, eval_batch_size=4)
    validation, other = clips[:3], clips[3:]
    detector.cache = whisper_tokens.StatesCache(
        train=[], validation_clips=validation, validation=detector.states_compute(validation, "host")
    )
    from_cache = detector.predict(validation)
    detector.cache = None
    from_features = detector.predict(validation)
    assert [p.binary for p in from_cache] == [p.binary for p in from_features]
    for cached, computed in zip(from_cache, from_features):
        assert cached.scalar == pytest.approx(computed.scalar, abs=1e-6)
    detector.cache = whisper_tokens.StatesCache(train=[], validation_clips=validation, validation=[])
    assert [p.clip_id for p in detector.predict(other)] == [c.clip_id for c in other]  # not in the cache: features


def test_on_a_gpu_host_states_are_pinned_and_device_states_are_not(checkpoint_dir, monkeypatch):
    """DataLoader's pin_memory pins every tensor of a batch, and refuses a tensor already on a
    GPU: the cached loader pins only states kept in host memory (the device mocked: no GPU here)."""
    detector = detector_with(checkpoint_dir)
    monkeypatch.setattr(WhisperTokenDetector, "device", property(lambda self: torch.device("cuda")))

    def entry(on: str) -> whisper_tokens.CachedClip:
        states = torch.zeros(3, 4, device=on)
        return whisper_tokens.CachedClip(states, states, *([torch.zeros(3).numpy()] * 3))

    assert detector.cached_loader([entry("cpu")], training=True).pin_memory
    assert not detector.cached_loader([entry("meta")], training=True).pin_memory  # "meta": not in host memory
    assert detector.loader([], training=False).pin_memory  # features come from the workers, on the host


def test_cached_batches_come_in_the_order_of_the_features_batches_whatever_the_workers(checkpoint_dir):
    """Two epochs of the training loader, its features made by a worker process, and of the cached
    states' loader (no workers) give the same clips in the same batches: a seed's shuffles do not
    depend on the workers or on the cache."""
    from modelzoo.training.synthetic import synthetic_set

    clips = synthetic_set(10, seed=41)
    detector = detector_with(checkpoint_dir, batch_size=3, num_workers=1)
    entries = detector.states_compute(clips, "host")
    features, cached = detector.loader(clips, training=True), detector.cached_loader(entries, training=True)

    def epochs(loader) -> list:
        return [(batch["word"].tolist(), batch["scalar"].tolist()) for _ in range(2) for batch in loader]

    by_features, by_cache = epochs(features), epochs(cached)
    assert by_features == by_cache and len(by_features) == 8
    assert by_features[:4] != by_features[4:]  # each epoch its own shuffle
