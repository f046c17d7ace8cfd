"""Signal checks from the MMEE curation (mmee-paper.txt, section 2.2).

Pure numpy: samples in, warnings out. The thresholds are the kind a curator
listens for: long silences at the edges, clipping, a clip cut mid-sound, words
too short to judge, and recordings made at a low sample rate.
"""

from dataclasses import dataclass

import numpy as np

FRAME_SECONDS = 0.010
MAX_EDGE_SILENCE_SECONDS = 1.0
# A frame is silent when it is this far below the loudest frame of the clip
# (relative, so a recording's noise floor does not count as speech) ...
SILENCE_BELOW_PEAK_DB = 35.0
# ... or quieter than this absolute floor.
SILENCE_FLOOR_DBFS = -60.0
# An edge is abrupt when its first/last frame is within this of the loudest
# frame and not quieter than the floor: the clip starts or stops mid-sound.
ABRUPT_EDGE_BELOW_PEAK_DB = 20.0
ABRUPT_EDGE_FLOOR_DBFS = -45.0
CLIP_LEVEL = 0.99
CLIP_MIN_RUN = 3
MIN_WORD_SECONDS = 0.050
MIN_SAMPLE_RATE = 16_000


@dataclass(frozen=True)
class SignalWarning:
    code: str
    detail: str


def check_signal(samples: np.ndarray, sample_rate: int, word_times: list[tuple[float, float]]) -> list[SignalWarning]:
    """samples: int16 array shaped (frames, channels)."""
    scaled = samples.astype(np.float64) / 32768.0
    mono = scaled.mean(axis=1)
    frame_db = _frame_levels_db(mono, sample_rate)
    warnings = []
    warnings += _edge_silence(frame_db)
    warnings += _abrupt_edges(frame_db)
    warnings += _clipping(scaled)
    warnings += _short_words(word_times)
    if sample_rate < MIN_SAMPLE_RATE:
        warnings.append(SignalWarning("low_sample_rate", f"{sample_rate} Hz (below {MIN_SAMPLE_RATE} Hz)"))
    return warnings


def _frame_levels_db(mono: np.ndarray, sample_rate: int) -> np.ndarray:
    size = max(1, round(FRAME_SECONDS * sample_rate))
    count = max(1, len(mono) // size)
    frames = np.zeros((count, size))
    usable = mono[: count * size]
    frames.flat[: len(usable)] = usable
    rms = np.sqrt(np.mean(frames**2, axis=1))
    return 20 * np.log10(np.maximum(rms, 1e-10))


def _silence_threshold(frame_db: np.ndarray) -> float:
    return max(SILENCE_FLOOR_DBFS, float(frame_db.max()) - SILENCE_BELOW_PEAK_DB)


def _edge_silence(frame_db: np.ndarray) -> list[SignalWarning]:
    voiced = np.flatnonzero(frame_db > _silence_threshold(frame_db))
    if len(voiced) == 0:
        return [SignalWarning("leading_silence", "the whole clip is silent")]
    leading = voiced[0] * FRAME_SECONDS
    trailing = (len(frame_db) - 1 - voiced[-1]) * FRAME_SECONDS
    warnings = []
    if leading > MAX_EDGE_SILENCE_SECONDS:
        warnings.append(SignalWarning("leading_silence", f"{leading:.2f} s of silence before speech"))
    if trailing > MAX_EDGE_SILENCE_SECONDS:
        warnings.append(SignalWarning("trailing_silence", f"{trailing:.2f} s of silence after speech"))
    return warnings


def _abrupt_edges(frame_db: np.ndarray) -> list[SignalWarning]:
    threshold = max(ABRUPT_EDGE_FLOOR_DBFS, float(frame_db.max()) - ABRUPT_EDGE_BELOW_PEAK_DB)
    warnings = []
    if frame_db[0] > threshold:
        warnings.append(SignalWarning("abrupt_start", f"first 10 ms at {frame_db[0]:.1f} dBFS: no quiet onset"))
    if frame_db[-1] > threshold:
        warnings.append(SignalWarning("abrupt_end", f"last 10 ms at {frame_db[-1]:.1f} dBFS: no quiet ending"))
    return warnings


def _clipping(scaled: np.ndarray) -> list[SignalWarning]:
    at_limit = np.abs(scaled) >= CLIP_LEVEL
    runs = 0
    for channel in at_limit.T:
        runs += _count_runs(channel, CLIP_MIN_RUN)
    if not runs:
        return []
    return [SignalWarning("clipping", f"{runs} run(s) of {CLIP_MIN_RUN}+ samples at full scale")]


def _count_runs(flags: np.ndarray, min_length: int) -> int:
    padded = np.concatenate(([0], flags.astype(np.int8), [0]))
    edges = np.diff(padded)
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return int(np.sum((ends - starts) >= min_length))


def _short_words(word_times: list[tuple[float, float]]) -> list[SignalWarning]:
    short = [index for index, (start, end) in enumerate(word_times) if end - start < MIN_WORD_SECONDS]
    if not short:
        return []
    listed = ", ".join(str(index) for index in short[:10]) + (" ..." if len(short) > 10 else "")
    return [SignalWarning("short_word", f"{len(short)} word(s) under 50 ms: index {listed}")]
