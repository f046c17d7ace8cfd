"""Clips of a finalized label set, read from its export folders, and the subsets the benchmark
settings train and test on. Pure: numpy and the standard library, no torch, no Django.

A folder is what the label-set exports unpack to (evaluation/services/dataset_export_files.py):
- the audiofolder export: `<split>/metadata.jsonl` (rows of `audiofolder_metadata`) and the
  16 kHz mono 16-bit WAV files it names (`<split>/<file_name>`);
- optionally the JSONL export's `clips.jsonl` beside it: the set's full rows. Where present it
  is the authority for every field (the audiofolder leaves word times out when any clip lacks
  them), and the audiofolder only says where each clip's audio is.
"""

import json
import wave
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16_000
SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class Word:
    text: str
    start: float | None  # seconds; None when the set has no time for the word
    end: float | None
    binary: int  # 1 when more than half of the annotators marked the word
    scalar: float  # mean of the annotators' levels scored 0, 0.5, 1

    @property
    def timed(self) -> bool:
        return self.start is not None and self.end is not None and self.end > self.start

    @property
    def times(self) -> tuple[float, float]:
        """(start, end) in seconds; ValueError for a word without them (only clips whose words
        have times reach the code that pools or measures words)."""
        if self.start is None or self.end is None:
            raise ValueError(f"the word {self.text!r} has no times")
        return self.start, self.end


@dataclass(frozen=True, eq=False)
class Clip:
    """One clip with its word labels. `audio` is read from `audio_path` each time it is asked for
    (a set of 10,000 clips would not fit in memory as arrays), unless `samples` holds it."""

    clip_id: str
    language: str
    split: str
    words: tuple[Word, ...]
    variety: str = ""
    speaker: str = ""
    emotion: str = ""
    arousal: str = ""  # "high", "low" or "" (MMEE section 4.3)
    scale_step: int | None = None  # training clips: the smallest data-scale percentage holding the clip
    audio_path: Path | None = None
    samples: np.ndarray | None = field(default=None, repr=False)

    @property
    def audio(self) -> np.ndarray:
        """float32 samples at 16 kHz, mono, in [-1, 1]."""
        if self.samples is not None:
            return self.samples
        if self.audio_path is None:
            raise ValueError(f"clip {self.clip_id!r} has no audio")
        return read_wav(self.audio_path)

    @property
    def sample_count(self) -> int:
        """The clip's length in samples at 16 kHz, from the WAV file's header when the audio is not
        in memory (choosing the longest clips of a set reads no audio)."""
        if self.samples is not None:
            return len(self.samples)
        if self.audio_path is None:
            raise ValueError(f"clip {self.clip_id!r} has no audio")
        with wave.open(str(self.audio_path), "rb") as handle:
            frames, rate = handle.getnframes(), handle.getframerate()
        return -(-frames * SAMPLE_RATE // rate)  # read_wav's resampling rounds up

    @property
    def has_word_times(self) -> bool:
        return bool(self.words) and all(word.timed for word in self.words)

    def with_word_times(self, times: Sequence[tuple[float, float]]) -> "Clip":
        words = tuple(replace(word, start=start, end=end) for word, (start, end) in zip(self.words, times, strict=True))
        return replace(self, words=words)


def read_wav(path: Path) -> np.ndarray:
    """A PCM WAV file as float32 mono at 16 kHz (other rates are resampled, channels averaged)."""
    with wave.open(str(path), "rb") as handle:
        width, channels, rate = handle.getsampwidth(), handle.getnchannels(), handle.getframerate()
        raw = handle.readframes(handle.getnframes())
    if width != 2:
        raise ValueError(f"{path}: only 16-bit PCM WAV is read (this one has {8 * width}-bit samples)")
    audio = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    audio = audio.reshape(-1, channels).mean(axis=1)
    if rate != SAMPLE_RATE:
        from math import gcd

        from scipy.signal import resample_poly

        common = gcd(rate, SAMPLE_RATE)
        audio = resample_poly(audio, SAMPLE_RATE // common, rate // common).astype(np.float32)
    return audio


def write_wav(path: Path, audio: np.ndarray) -> None:
    """16 kHz mono 16-bit PCM, the format of the platform's model audio."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pcm = (np.clip(np.asarray(audio, dtype=np.float64), -1.0, 1.0) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(SAMPLE_RATE)
        handle.writeframes(pcm.tobytes())


# --- reading an export folder ---


def load_folder(folder: Path | str) -> list[Clip]:
    """Every clip of an export folder (see the module docstring), in the order of its rows."""
    folder = Path(folder)
    audiofolder = _audiofolder_rows(folder)
    clips_file = folder / "clips.jsonl"
    if clips_file.exists():
        clips = [_clip_from_set_row(row, folder, audiofolder) for row in _jsonl(clips_file)]
    elif audiofolder:
        clips = [_clip_from_metadata(row, path) for row, path in audiofolder.values()]
    else:
        raise FileNotFoundError(f"{folder}: neither clips.jsonl nor <split>/metadata.jsonl found")
    if not clips:
        raise ValueError(f"{folder}: the export holds no clips")
    return clips


def _jsonl(path: Path) -> Iterable[dict]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _audiofolder_rows(folder: Path) -> dict[str, tuple[dict, Path]]:
    """clip id -> (its metadata.jsonl row with the split added, its WAV file)."""
    rows = {}
    for metadata in sorted(folder.glob("*/metadata.jsonl")):
        split = metadata.parent.name
        for row in _jsonl(metadata):
            rows[row["clip_id"]] = ({**row, "split": split}, metadata.parent / row["file_name"])
    return rows


def _clip_from_set_row(row: dict, folder: Path, audiofolder: dict) -> Clip:
    if row["clip_id"] in audiofolder:
        audio_path = audiofolder[row["clip_id"]][1]
    else:
        from evaluation.reports.label_set_files import safe_file_stem  # pure: the exporter's own naming

        audio_path = folder / row["split"] / f"{safe_file_stem(row['clip_id'])}.wav"
    words = tuple(
        Word(w["text"], _seconds(w.get("start")), _seconds(w.get("end")), int(w["binary"]), _scalar(w["scalar"]))
        for w in sorted(row["words"], key=lambda w: w["index"])
    )
    return _clip(row, words, audio_path)


def _clip_from_metadata(row: dict, audio_path: Path) -> Clip:
    count = len(row["words"])
    starts, ends = row.get("start") or [None] * count, row.get("end") or [None] * count
    words = tuple(
        Word(text, _seconds(start), _seconds(end), int(binary), _scalar(scalar))
        for text, start, end, binary, scalar in zip(
            row["words"], starts, ends, row["binary"], row["scalar"], strict=True
        )
    )
    return _clip(row, words, audio_path)


def _scalar(value) -> float:
    """A binary-only set (an imported dataset, a binary study) has no scalar label: it reads as 0,
    which nothing uses, since such a set is never trained or tested in a mode with a scalar head
    (modelzoo.services.benchmark_runs refuses it)."""
    return 0.0 if value is None else float(value)


def _clip(row: dict, words: tuple[Word, ...], audio_path: Path) -> Clip:
    return Clip(
        clip_id=str(row["clip_id"]),
        language=row.get("language") or "",
        split=row["split"],
        words=words,
        variety=row.get("variety") or "",
        speaker=row.get("speaker") or "",
        emotion=row.get("emotion") or "",
        arousal=row.get("arousal") or "",
        # the audiofolder writes 0 for clips in no training subset (validation, test)
        scale_step=row.get("scale_step") or None,
        audio_path=audio_path,
    )


def _seconds(value) -> float | None:
    return None if value is None else float(value)


# --- selections for the benchmark settings ---


def in_split(clips: Iterable[Clip], split: str) -> list[Clip]:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; one of {', '.join(SPLITS)}")
    return [clip for clip in clips if clip.split == split]


def language_of(clip: Clip, by: str = "language") -> str:
    """The clip's language, or its regional variety with by="variety" (MMEE's 13 configurations)."""
    if by not in ("language", "variety"):
        raise ValueError('by must be "language" or "variety"')
    return clip.variety if by == "variety" else clip.language


def languages(clips: Iterable[Clip], by: str = "language") -> list[str]:
    return sorted({language_of(clip, by) for clip in clips})


def of_language(clips: Iterable[Clip], language: str, by: str = "language") -> list[Clip]:
    return [clip for clip in clips if language_of(clip, by) == language]


def not_of_language(clips: Iterable[Clip], language: str, by: str = "language") -> list[Clip]:
    return [clip for clip in clips if language_of(clip, by) != language]


def of_arousal(clips: Iterable[Clip], arousal: str) -> list[Clip]:
    if arousal not in ("high", "low"):
        raise ValueError('arousal must be "high" or "low"')
    return [clip for clip in clips if clip.arousal == arousal]


def training_subset(clips: Iterable[Clip], percent: int) -> list[Clip]:
    """The nested data-scale subset: training clips whose scale step is at most `percent`."""
    if not 0 < percent <= 100:
        raise ValueError("the data-scale percentage must be in (0, 100]")
    return [clip for clip in in_split(clips, "train") if clip.scale_step is not None and clip.scale_step <= percent]
