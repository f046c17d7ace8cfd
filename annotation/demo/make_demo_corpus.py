"""Generate the SYNTHETIC demo corpus: espeak-ng speech with one emphasized word per clip.

    python -m annotation.demo.make_demo_corpus OUTDIR [--seed N]

Writes OUTDIR/audio/<clip id>.<mp3|ogg|flac|wav>, OUTDIR/manifest.jsonl and OUTDIR/README.md.
Emphasis is produced with an SSML <prosody> element around the intended word; its pitch,
rate and volume are randomized per clip, and the whole sentence gets a small random rate and
pitch shift too, so that clips differ in tempo and pitch level and not only in the
emphasized word. (Loudness still often points at that word: see the README.)

Deliberately free of Django imports: it runs on a bare checkout with numpy and imageio-ffmpeg.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import imageio_ffmpeg
import numpy as np

from annotation.demo import espeak
from annotation.demo.sentences import DEFAULT_SEED, ClipSpec, build_clip_specs

MIN_CLIPS = 60

# Ranges for the <prosody> element on the intended word (percent).
EMPHASIS_PITCH_RANGE = (20, 50)  # relative raise
EMPHASIS_RATE_RANGE = (65, 85)  # absolute speed, below 100 = slower
EMPHASIS_VOLUME_RANGE = (20, 60)  # relative raise
# Louder than the emphasis: espeak's pitch raise also adds energy to the emphasized word.
DISTRACTOR_VOLUME_RANGE = (50, 90)  # relative raise on one other word
# Whole-sentence variation, so speakers are not all equally fast and high.
GLOBAL_RATE_RANGE = (90, 112)
GLOBAL_PITCH_RANGE = (-10, 10)
# espeak-ng limits its output near full scale, which would flatten a +60 % volume boost;
# speaking the sentence at half volume keeps the boosted word below that limiter.
SENTENCE_VOLUME = "-50%"

# Word alignment and trimming.
MIN_WORD_SECONDS = 0.05  # shorter: espeak merged it into a neighbour (and the importer warns)
SILENCE_FRAME_SECONDS = 0.01
SILENCE_BELOW_PEAK_DB = 40.0  # frames this far below the loudest frame count as silence
FIRST_WORD_LEAD_SECONDS = 0.02  # room before the first audible sample
LAST_WORD_TAIL_SECONDS = 0.04  # room after the last audible sample (release of the last word)
AUDIO_TAIL_SECONDS = 0.25  # silence kept after speech so playback does not end abruptly
# espeak starts speaking on the first sample; a clip that opens mid-sound clicks.
LEAD_SILENCE_SECONDS = 0.1
PEAK_DBFS = -3.0  # headroom for lossy encoders, whose output overshoots the input peak

# A mix of containers so that the importer's decoding paths are all exercised.
FORMAT_COUNTS_FIXED = {"wav": 4, "flac": 5}  # lossless ones are big: only a few
LOSSY_FORMATS = ("mp3", "ogg")
ENCODER_ARGUMENTS = {
    "mp3": ["-c:a", "libmp3lame", "-b:a", "48k"],
    "ogg": ["-c:a", "libvorbis", "-q:a", "2"],
    "flac": ["-c:a", "flac", "-compression_level", "8"],
    "wav": ["-c:a", "pcm_s16le"],
}


class AlignmentError(ValueError):
    """espeak's WORD events cannot be mapped onto the transcript tokens cleanly."""


@dataclass(frozen=True)
class Prosody:
    pitch: str
    rate: str
    volume: str | None = None

    def ssml_attributes(self) -> str:
        attributes = {"pitch": self.pitch, "rate": self.rate, "volume": self.volume}
        return " ".join(f'{name}="{value}"' for name, value in attributes.items() if value)

    def as_manifest(self) -> dict:
        return {"pitch": self.pitch, "rate": self.rate, "volume": self.volume}


def random_emphasis_prosody(rng: random.Random) -> Prosody:
    return Prosody(
        pitch=f"+{rng.randint(*EMPHASIS_PITCH_RANGE)}%",
        rate=f"{rng.randint(*EMPHASIS_RATE_RANGE)}%",
        volume=f"+{rng.randint(*EMPHASIS_VOLUME_RANGE)}%",
    )


def random_loudness_distractor(rng: random.Random, word_count: int, emphasis_index: int) -> tuple[int, Prosody]:
    """Another word made louder by as much as the emphasis, with no pitch or
    duration change, so that loudness alone does not give the answer away."""
    index = rng.choice([i for i in range(word_count) if i != emphasis_index])
    return index, Prosody(pitch="+0%", rate="100%", volume=f"+{rng.randint(*DISTRACTOR_VOLUME_RANGE)}%")


def random_global_prosody(rng: random.Random) -> Prosody:
    return Prosody(
        pitch=f"{rng.randint(*GLOBAL_PITCH_RANGE):+d}%",
        rate=f"{rng.randint(*GLOBAL_RATE_RANGE)}%",
        volume=SENTENCE_VOLUME,
    )


def build_ssml(tokens: list[str], styled: dict[int, Prosody], sentence: Prosody) -> tuple[str, list[tuple[int, int]]]:
    """SSML for the sentence plus each token's [start, end) character span inside it.

    The spans are what espeak's WORD events are matched against: the library reports
    positions in characters of exactly this string, markup included.
    """
    parts = [f"<speak><prosody {sentence.ssml_attributes()}>"]
    position = len(parts[0])
    spans = []
    for index, token in enumerate(tokens):
        if any(character in token for character in '<>&"'):
            raise ValueError(f"token {token!r} would need XML escaping, which shifts positions")
        separator = " " if index else ""
        if index in styled:
            opening = f"{separator}<prosody {styled[index].ssml_attributes()}>"
            parts.append(opening + token + "</prosody>")
            start = position + len(opening)
        else:
            parts.append(separator + token)
            start = position + len(separator)
        spans.append((start, start + len(token)))
        position += len(parts[-1])
    parts.append("</prosody></speak>")
    return "".join(parts), spans


def word_start_samples(spans: list[tuple[int, int]], events: list[espeak.WordEvent]) -> list[int]:
    """One start sample per token, or AlignmentError if some token has no WORD event.

    Matching is by text position, not by order: espeak sometimes speaks two words as one
    ("out of", "from the") and then emits a single WORD event for both, which an
    order-based match would silently shift onto the wrong words. A token may get more
    than one event (a "¿" right after a tag is reported as a word of its own); its
    earliest event is where the token starts.
    """
    # espeak also emits zero-length WORD events that point outside the text (position 0
    # or into the closing markup); they carry no word.
    real_events = [event for event in events if event.length > 0]
    starts = []
    for index, (span_start, span_end) in enumerate(spans):
        matching = [e.sample for e in real_events if span_start <= e.text_position < span_end]
        if not matching:
            raise AlignmentError(f"token {index} has no WORD event of its own")
        starts.append(min(matching))
    if any(later <= earlier for earlier, later in itertools.pairwise(starts)):
        raise AlignmentError("WORD events are not in time order")
    return starts


def audible_range(samples: np.ndarray, sample_rate: int) -> tuple[int, int]:
    """First and last sample of the frames within SILENCE_BELOW_PEAK_DB of the loudest frame."""
    frame = int(sample_rate * SILENCE_FRAME_SECONDS)
    frame_count = len(samples) // frame
    if frame_count == 0:
        raise AlignmentError("no audio")
    frames = samples[: frame_count * frame].astype(np.float64).reshape(frame_count, frame)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    audible = np.flatnonzero(rms >= rms.max() * 10 ** (-SILENCE_BELOW_PEAK_DB / 20))
    return int(audible[0] * frame), int((audible[-1] + 1) * frame)


def with_leading_silence(samples: np.ndarray, starts: list[int], sample_rate: int) -> tuple[np.ndarray, list[int]]:
    lead = int(LEAD_SILENCE_SECONDS * sample_rate)
    padded = np.concatenate([np.zeros(lead, dtype=np.int16), samples])
    return padded, [start + lead for start in starts]


def normalized_peak(samples: np.ndarray) -> np.ndarray:
    """Scale the whole clip so its peak sits at PEAK_DBFS; word-to-word levels are unchanged."""
    peak = int(np.abs(samples.astype(np.int32)).max())
    if peak == 0:
        return samples
    gain = 32767 * 10 ** (PEAK_DBFS / 20) / peak
    return np.round(samples.astype(np.float64) * gain).astype(np.int16)


def word_boundaries(starts: list[int], samples: np.ndarray, sample_rate: int) -> tuple[list[tuple[int, int]], int]:
    """(start, end) samples per word and the number of samples to keep.

    A word ends where the next one starts; the last one ends shortly after the last
    audible frame, because espeak pads its output with a long trailing silence.
    """
    onset, offset = audible_range(samples, sample_rate)
    starts = list(starts)
    starts[0] = max(starts[0], onset - int(FIRST_WORD_LEAD_SECONDS * sample_rate))
    last_end = min(len(samples), offset + int(LAST_WORD_TAIL_SECONDS * sample_rate))
    ends = [*starts[1:], last_end]
    keep = min(len(samples), offset + int(AUDIO_TAIL_SECONDS * sample_rate))
    boundaries = list(zip(starts, ends))
    too_short = int(MIN_WORD_SECONDS * sample_rate)
    if any(end - start < too_short for start, end in boundaries):
        raise AlignmentError("a word is shorter than %.0f ms" % (MIN_WORD_SECONDS * 1000))
    return boundaries, keep


def timed_words(tokens: list[str], boundaries: list[tuple[int, int]], sample_rate: int) -> list[dict]:
    return [
        {"text": token, "start": round(start / sample_rate, 3), "end": round(end / sample_rate, 3)}
        for token, (start, end) in zip(tokens, boundaries)
    ]


def assign_formats(clip_ids: list[str], seed: int) -> dict[str, str]:
    formats = [fmt for fmt, count in FORMAT_COUNTS_FIXED.items() for _ in range(count)]
    lossy_needed = len(clip_ids) - len(formats)
    formats += [LOSSY_FORMATS[i % len(LOSSY_FORMATS)] for i in range(lossy_needed)]
    random.Random(f"{seed}/formats").shuffle(formats)
    return dict(zip(clip_ids, formats))


def encode(samples: np.ndarray, sample_rate: int, fmt: str, path: Path) -> None:
    command = [
        imageio_ffmpeg.get_ffmpeg_exe(),
        "-hide_banner",
        "-loglevel",
        "error",
        "-y",
        "-f",
        "s16le",
        "-ar",
        str(sample_rate),
        "-ac",
        "1",
        "-i",
        "pipe:0",
        *ENCODER_ARGUMENTS[fmt],
        # No encoder/version tags, so regenerating yields the same bytes where possible.
        "-map_metadata",
        "-1",
        "-fflags",
        "+bitexact",
        "-flags:a",
        "+bitexact",
        str(path),
    ]
    result = subprocess.run(command, input=samples.astype("<i2").tobytes(), capture_output=True)
    if result.returncode != 0:
        raise RuntimeError(f"ffmpeg failed for {path}: {result.stderr.decode(errors='replace')}")


def make_clip(spec: ClipSpec, fmt: str, seed: int, audio_dir: Path, generator: str) -> dict:
    """Synthesize, align, trim and encode one clip; return its manifest row."""
    rng = random.Random(f"{seed}/{spec.clip_id}")  # per clip: dropping one does not shift others
    emphasis = random_emphasis_prosody(rng)
    sentence = random_global_prosody(rng)
    tokens = spec.tokens
    distractor_index, distractor = random_loudness_distractor(rng, len(tokens), spec.emphasis_index)
    ssml, spans = build_ssml(tokens, {spec.emphasis_index: emphasis, distractor_index: distractor}, sentence)
    synthesis = espeak.synthesize_ssml(ssml, spec.voice)
    sample_rate = synthesis.sample_rate
    samples, starts = with_leading_silence(synthesis.samples, word_start_samples(spans, synthesis.words), sample_rate)
    boundaries, keep = word_boundaries(starts, samples, sample_rate)
    audio_name = f"{spec.clip_id}.{fmt}"
    encode(normalized_peak(samples[:keep]), sample_rate, fmt, audio_dir / audio_name)
    return {
        "id": spec.clip_id,
        "audio": f"audio/{audio_name}",
        "transcript": spec.transcript,
        "words": timed_words(tokens, boundaries, sample_rate),
        "language": spec.language,
        "variety": spec.variety,
        "speaker": spec.speaker,
        "emotion": "neutral",
        "synthetic": True,
        "intended_emphasis": [spec.emphasis_index],
        "generator": generator,
        "prosody": emphasis.as_manifest(),
        "loudness_distractor": {"index": distractor_index, **distractor.as_manifest()},
    }


def remove_previous_audio(audio_dir: Path) -> None:
    # Only our own files: a clip may change format between seeds and must not linger.
    for path in audio_dir.glob("demo-*.*"):
        path.unlink()


def write_manifest(rows: list[dict], path: Path) -> None:
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _percent_range(bounds: tuple[int, int], signed: bool = False) -> str:
    low, high = (f"{value:+d}" if signed else str(value) for value in bounds)
    return f"{low}..{high} %"


def describe_counts(counter: Counter) -> str:
    return ", ".join(f"{key} {count}" for key, count in sorted(counter.items()))


def readme_text(seed: int, rows: list[dict], version: str) -> str:
    languages = Counter(row["language"] for row in rows)
    formats = Counter(row["audio"].rsplit(".", 1)[1] for row in rows)
    return f"""# Demo corpus (SYNTHETIC)

**Every clip in this folder is synthetic speech generated by espeak-ng {version}.**
It is demo and test material for the annotation platform, not research data: no human
spoke these sentences, and the "emphasis" is whatever espeak-ng makes of an SSML
`<prosody>` element.

- {len(rows)} clips; languages: {describe_counts(languages)}; formats: {describe_counts(formats)}
- mono, 22.05 kHz; mp3 48 kbit/s, Ogg Vorbis q2, FLAC, 16-bit WAV

## How it was made

1. Sentences (5-12 words, English, Spanish, German) come from
   `annotation/demo/sentences.py`, which also picks, from the seed, a voice for each
   clip (e.g. `en-us+f2`, `en`, `en-gb-scotland`, `es-419`, `de+m3`) and ONE content
   word to emphasize, rotating between the start, middle and end of the sentence.
2. `annotation/demo/make_demo_corpus.py` wraps that word in
   `<prosody pitch=".." rate=".." volume="..">` with values drawn per clip and
   recorded in the manifest's `prosody`:
   pitch {_percent_range(EMPHASIS_PITCH_RANGE, signed=True)}, rate {_percent_range(EMPHASIS_RATE_RANGE)}, volume {_percent_range(EMPHASIS_VOLUME_RANGE, signed=True)}.
   The whole sentence is wrapped in a small random change of rate
   ({_percent_range(GLOBAL_RATE_RANGE)}) and pitch ({_percent_range(GLOBAL_PITCH_RANGE, signed=True)}), so speakers differ in tempo and height,
   and spoken at volume {SENTENCE_VOLUME} so that espeak-ng's output limiter does not flatten the boost.
   One OTHER word of each clip is made louder still (volume {_percent_range(DISTRACTOR_VOLUME_RANGE, signed=True)},
   no pitch or rate change; recorded as `loudness_distractor`), so that loudness alone
   does not give the emphasized word away: pitch and duration do.
3. libespeak-ng synthesizes the SSML (`annotation/demo/espeak.py`, ctypes, synchronous
   mode). Word start times are the library's WORD events, matched to the transcript
   tokens by character position; a word ends where the next begins, the last one shortly
   after the final audible frame. Clips in which some token gets no WORD event of its
   own (espeak merges pairs like "out of" into one word) are dropped.
4. {LEAD_SILENCE_SECONDS:g} s of silence is added before the speech, trailing silence is trimmed
   to {AUDIO_TAIL_SECONDS:g} s, each clip is scaled to a peak of {PEAK_DBFS:g} dBFS and encoded with ffmpeg
   (imageio-ffmpeg).

## Manifest

`manifest.jsonl` has one JSON object per clip: `id`, `audio` (path relative to this
folder), `transcript`, `words` (the transcript's whitespace-separated tokens in order,
punctuation attached, with `start`/`end` in seconds), `language`, `variety`, `speaker`,
`emotion`, `synthetic` (always true), `intended_emphasis`, `generator`, `prosody`,
`loudness_distractor`.

`intended_emphasis` lists the 0-based indices into `words` of the word(s) the generator
*meant* to emphasize (here always exactly one). It is the generator's intent, not a human
judgement: espeak-ng's rendering of the prosody change can be weak, so treat it as a
reference for sanity checks and demos, not as gold-standard annotation. Thanks to the
loudness distractor, the intended word is the loudest word of its clip in only about
half of the clips.

## Regenerate

    python -m annotation.demo.make_demo_corpus annotation/demo_corpus --seed {seed}

Same seed, same machine and espeak-ng version: the same manifest (audio bytes may differ
if the encoders change). Requires libespeak-ng.so.1 (Debian: `espeak-ng`).
"""


def generate(outdir: Path, seed: int) -> tuple[list[dict], list[str]]:
    """Build the corpus in outdir; return the manifest rows and the ids of dropped clips."""
    version = espeak.library_version()  # first, so a missing library leaves outdir untouched
    audio_dir = outdir / "audio"
    audio_dir.mkdir(parents=True, exist_ok=True)
    remove_previous_audio(audio_dir)
    generator = f"espeak-ng {version} (SSML prosody)"
    specs = build_clip_specs(seed)
    formats = assign_formats([spec.clip_id for spec in specs], seed)
    rows, dropped = [], []
    for spec in specs:
        try:
            rows.append(make_clip(spec, formats[spec.clip_id], seed, audio_dir, generator))
        except AlignmentError as exc:
            print(f"dropped {spec.clip_id} ({spec.voice}): {exc}", file=sys.stderr)
            dropped.append(spec.clip_id)
    write_manifest(rows, outdir / "manifest.jsonl")
    (outdir / "README.md").write_text(readme_text(seed, rows, version), encoding="utf-8")
    return rows, dropped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    began = time.monotonic()
    try:
        rows, dropped = generate(args.outdir, args.seed)
    except espeak.EspeakUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    size = sum(path.stat().st_size for path in args.outdir.rglob("*") if path.is_file())
    languages = Counter(row["language"] for row in rows)
    formats = Counter(row["audio"].rsplit(".", 1)[1] for row in rows)
    print(
        f"{len(rows)} clips ({dict(sorted(languages.items()))}; {dict(sorted(formats.items()))}), "
        f"{len(dropped)} dropped, {size / 1e6:.2f} MB, {time.monotonic() - began:.1f} s"
    )
    if len(rows) < MIN_CLIPS:
        print(f"error: only {len(rows)} clips, the demo needs at least {MIN_CLIPS}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
