import numpy as np

from annotation.ingest.checks import check_signal
from tests.audio_files import speechlike

RATE = 16000


def codes(samples, rate=RATE, words=()):
    return [
        warning.code
        for warning in check_signal(samples.reshape(-1, 1) if samples.ndim == 1 else samples, rate, list(words))
    ]


def test_clean_clip_has_no_warning():
    assert codes(speechlike(2.0)) == []


def test_long_leading_and_trailing_silence():
    assert codes(speechlike(4.0, lead=1.3, tail=1.4)) == ["leading_silence", "trailing_silence"]
    assert codes(speechlike(3.0, lead=0.9, tail=0.9)) == []


def test_silence_is_relative_to_the_recording_noise_floor():
    noisy = speechlike(4.0, lead=1.5).astype(np.float64)
    noisy += np.random.default_rng(1).normal(0, 30, len(noisy))  # about -60 dBFS of hiss
    assert "leading_silence" in codes(noisy.astype(np.int16))


def test_clipping():
    loud = speechlike(1.0, amplitude=1.4)
    loud = np.clip(loud.astype(np.int32) * 2, -32768, 32767).astype(np.int16)
    assert "clipping" in codes(loud)


def test_abrupt_start_and_end():
    cut = speechlike(2.0, lead=0, tail=0)[1000:-1000]
    assert codes(cut) == ["abrupt_start", "abrupt_end"]


def test_short_words():
    warnings = check_signal(speechlike(2.0).reshape(-1, 1), RATE, [(0.1, 0.5), (0.5, 0.53), (0.6, 0.9)])
    assert [(w.code, w.detail) for w in warnings] == [("short_word", "1 word(s) under 50 ms: index 1")]


def test_low_sample_rate():
    assert codes(speechlike(2.0, 8000), 8000) == ["low_sample_rate"]


def test_all_silent_clip_is_flagged_not_crashing():
    assert codes(np.zeros(RATE, dtype=np.int16)) == ["leading_silence"]
