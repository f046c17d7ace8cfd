"""Synthetic emphasis clips made with numpy, for tests, benchmarks and demos on machines without
speech data: each "word" is a harmonic tone with a pitch glide, and an emphasized word is louder,
higher and longer by an amount that grows with its scalar label (randomized per clip, so no
single cue separates the classes perfectly). Also writes such clips as a label-set export folder,
with the exporter's own row writers, so the loader is tested on the real layout.
"""

from pathlib import Path

import numpy as np

from evaluation.reports.label_set_files import audiofolder_metadata, canonical_line, safe_file_stem
from modelzoo.training.data import SAMPLE_RATE, Clip, Word, write_wav

VOCABULARY = (
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "she",
    "said",
    "never",
    "that",
    "house",
    "was",
    "red",
    "today",
    "we",
    "will",
    "go",
    "home",
    "it",
    "is",
    "my",
    "book",
    "not",
    "yours",
)
EMOTIONS = {"high": ("anger", "excitement", "fear"), "low": ("sadness", "calmness", "boredom")}


def synthetic_clip(
    rng: np.random.Generator,
    *,
    clip_id: str,
    language: str = "en",
    split: str = "train",
    words: int | None = None,
    emotion: str = "",
    arousal: str = "",
    scale_step: int | None = None,
) -> Clip:
    count = int(words or rng.integers(4, 8))
    texts = [str(text) for text in rng.choice(VOCABULARY, size=count)]
    emphasized = set(rng.choice(count, size=1 + int(rng.random() < 0.3), replace=False).tolist())
    scalars = [float(rng.uniform(0.55, 1.0)) if i in emphasized else float(rng.uniform(0.0, 0.3)) for i in range(count)]
    base_f0 = rng.uniform(100, 200)
    pieces, spans, cursor = [_silence(rng.uniform(0.1, 0.25))], [], 0.0
    cursor = len(pieces[0]) / SAMPLE_RATE
    for index, scalar in enumerate(scalars):
        strength = scalar * rng.uniform(0.6, 1.4)  # how strongly this clip realizes emphasis
        duration = rng.uniform(0.16, 0.3) * (1 + 0.6 * strength)
        f0 = base_f0 * (1 - 0.03 * index) * (1 + 0.35 * strength)  # declination, raised by emphasis
        tone = _harmonic_word(rng, duration, f0, amplitude=0.12 * (1 + 1.6 * strength))
        spans.append((round(cursor, 4), round(cursor + duration, 4)))
        gap = _silence(rng.uniform(0.04, 0.12))
        pieces += [tone, gap]
        cursor += duration + len(gap) / SAMPLE_RATE
    pieces.append(_silence(rng.uniform(0.1, 0.2)))
    audio = np.concatenate(pieces) + rng.normal(0, 0.002, size=sum(len(p) for p in pieces))
    labelled = tuple(
        Word(text, start, end, int(i in emphasized), round(scalar, 4))
        for i, (text, (start, end), scalar) in enumerate(zip(texts, spans, scalars))
    )
    return Clip(
        clip_id=clip_id,
        language=language,
        split=split,
        words=labelled,
        variety=language,
        speaker=f"{language}-speaker",
        emotion=emotion,
        arousal=arousal,
        scale_step=scale_step,
        samples=audio.astype(np.float32),
    )


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * SAMPLE_RATE))


def _harmonic_word(rng: np.random.Generator, duration: float, f0: float, amplitude: float) -> np.ndarray:
    t = np.arange(int(duration * SAMPLE_RATE)) / SAMPLE_RATE
    glide = f0 * (1 + rng.uniform(-0.08, 0.08) * t / duration)
    phase = 2 * np.pi * np.cumsum(glide) / SAMPLE_RATE
    tone = sum(np.sin(k * phase) / k for k in range(1, 7))
    ramp = min(len(t) // 4, int(0.02 * SAMPLE_RATE))
    envelope = np.ones_like(t)
    envelope[:ramp] = np.linspace(0, 1, ramp)
    envelope[-ramp:] = np.linspace(1, 0, ramp)
    return amplitude * tone * envelope


def synthetic_set(
    count: int, *, seed: int = 0, languages: tuple[str, ...] = ("en",), words: int | None = None
) -> list[Clip]:
    """`count` clips per language, split 80/10/10 in order, alternating high and low arousal,
    training clips spread over the data-scale steps 10..100."""
    rng = np.random.default_rng(seed)
    clips = []
    for language in languages:
        for i in range(count):
            split = "train" if i < round(0.8 * count) else "validation" if i < round(0.9 * count) else "test"
            arousal = ("high", "low")[i % 2]
            clips.append(
                synthetic_clip(
                    rng,
                    clip_id=f"{language}-{i:04d}",
                    language=language,
                    split=split,
                    words=words,
                    emotion=EMOTIONS[arousal][i % 3],
                    arousal=arousal,
                    scale_step=10 * (1 + i % 10) if split == "train" else None,
                )
            )
    return clips


def set_row(clip: Clip, *, with_times: bool = True) -> dict:
    """The clip as a label set's stored row (evaluation.models.LabelSetClip.as_row)."""
    return {
        "clip_id": clip.clip_id,
        "study": "synthetic",
        "split": clip.split,
        "language": clip.language,
        "variety": clip.variety,
        "speaker": clip.speaker,
        "emotion": clip.emotion,
        "arousal": clip.arousal,
        "scale_step": clip.scale_step,
        "duration": round(len(clip.audio) / SAMPLE_RATE, 3),
        "annotators": [],
        "words": [
            {
                "index": i,
                "text": w.text,
                "start": w.start if with_times else None,
                "end": w.end if with_times else None,
                "binary": bool(w.binary),
                "scalar": w.scalar,
                "levels": [],
            }
            for i, w in enumerate(clip.words)
        ],
    }


def write_export_folder(folder: Path, clips: list[Clip], *, clips_jsonl: bool = True, with_times: bool = True) -> Path:
    """The clips as the audiofolder export (WAVs and per-split metadata.jsonl) plus, unless
    clips_jsonl=False, the JSONL export's clips.jsonl beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [set_row(clip, with_times=with_times) for clip in clips]
    metadata: dict[str, list[str]] = {}
    for clip, row in zip(clips, rows):
        file_name = f"{safe_file_stem(clip.clip_id)}.wav"
        write_wav(folder / clip.split / file_name, clip.audio)
        line = canonical_line(audiofolder_metadata(row, file_name, word_times=with_times))
        metadata.setdefault(clip.split, []).append(line)
    for split, lines in metadata.items():
        (folder / split / "metadata.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    if clips_jsonl:
        (folder / "clips.jsonl").write_text("".join(canonical_line(row) + "\n" for row in rows), encoding="utf-8")
    return folder
