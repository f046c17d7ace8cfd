"""Make small audio files and corpus folders for tests (no espeak needed)."""

import json
import subprocess
import wave
from pathlib import Path

import imageio_ffmpeg
import numpy as np

FFMPEG = imageio_ffmpeg.get_ffmpeg_exe()


def speechlike(
    seconds: float,
    sample_rate: int = 16000,
    *,
    lead: float = 0.1,
    tail: float = 0.1,
    amplitude: float = 0.3,
    seed: int = 0,
) -> np.ndarray:
    """A voiced-sounding signal with quiet edges, as int16 mono."""
    rng = np.random.default_rng(seed)
    total = int(seconds * sample_rate)
    t = np.arange(total) / sample_rate
    tone = np.sin(2 * np.pi * 140 * t) + 0.5 * np.sin(2 * np.pi * 280 * t) + 0.05 * rng.standard_normal(total)
    envelope = np.ones(total)
    envelope[: int(lead * sample_rate)] = 0
    envelope[total - int(tail * sample_rate) :] = 0
    ramp = int(0.02 * sample_rate)
    start, stop = int(lead * sample_rate), total - int(tail * sample_rate)
    envelope[start : start + ramp] = np.linspace(0, 1, ramp)
    envelope[stop - ramp : stop] = np.linspace(1, 0, ramp)
    signal = amplitude * tone / np.abs(tone).max() * envelope
    return (signal * 32767).astype(np.int16)


def write_wav(path: Path, samples: np.ndarray, sample_rate: int = 16000) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(channels)
        handle.setsampwidth(2)
        handle.setframerate(sample_rate)
        handle.writeframes(samples.astype("<i2").tobytes())
    return path


def write_audio(path: Path, samples: np.ndarray, sample_rate: int = 16000) -> Path:
    """Write in the format the suffix names (wav directly, others through ffmpeg)."""
    if path.suffix == ".wav":
        return write_wav(path, samples, sample_rate)
    source = write_wav(path.with_suffix(".source.wav"), samples, sample_rate)
    codec = {".m4a": ["-c:a", "aac"], ".ogg": ["-c:a", "libvorbis"]}.get(path.suffix, [])
    subprocess.run([FFMPEG, "-v", "error", "-y", "-i", str(source), *codec, str(path)], check=True)
    source.unlink()
    return path


class CorpusFolder:
    """A corpus folder under construction: add clips, then write the manifest."""

    def __init__(self, root: Path):
        self.root = root
        self.rows: list[dict] = []
        root.mkdir(parents=True, exist_ok=True)

    def add(
        self,
        clip_id: str,
        transcript: str = "the cat sat on the mat",
        *,
        seconds: float = 1.5,
        suffix: str = ".wav",
        seed: int | None = None,
        write: bool = True,
        **extra,
    ) -> dict:
        audio = f"audio/{clip_id}{suffix}"
        if write:
            seed = len(self.rows) if seed is None else seed
            write_audio(self.root / audio, speechlike(seconds, seed=seed))
        row = {"id": clip_id, "audio": audio, "transcript": transcript, "language": "en", **extra}
        self.rows.append(row)
        return row

    def write_jsonl(self) -> Path:
        path = self.root / "manifest.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in self.rows))
        return path
