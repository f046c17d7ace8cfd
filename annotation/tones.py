"""The sound check: count the tones in a short generated clip (as ReSEval
and ITU-T P.808 do). The clip is made again from a seed whenever it is asked
for, so nothing is stored and the answer never reaches the browser."""

import io
import random
import wave

import numpy as np

RATE = 16000
MIN_TONES, MAX_TONES = 3, 7


def tone_count(seed: str) -> int:
    return random.Random(seed).randint(MIN_TONES, MAX_TONES)


def tone_clip_wav(seed: str) -> bytes:
    """WAV bytes with tone_count(seed) short tones at irregular gaps."""
    rng = random.Random(seed)
    count = rng.randint(MIN_TONES, MAX_TONES)
    pieces = [_silence(0.4)]
    for _ in range(count):
        pieces.append(_tone(rng.choice([440.0, 554.37, 659.25, 880.0]), rng.uniform(0.18, 0.3)))
        pieces.append(_silence(rng.uniform(0.35, 0.8)))
    samples = np.concatenate(pieces)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(RATE)
        handle.writeframes((samples * 0.4 * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


def _tone(frequency: float, seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    ramp = np.minimum(1.0, np.minimum(t, t[::-1]) / 0.02)  # no clicks: a click would be an extra "tone"
    return np.sin(2 * np.pi * frequency * t) * ramp


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE))
