"""Decode one audio file and make the copies the platform needs.

ffmpeg (the static binary in the imageio-ffmpeg wheel, so nothing else needs
installing) decodes and writes the 16 kHz mono 16-bit WAV for models and the
MP3 that browsers play; pydub reads the decoded samples for the signal checks.

The container is sniffed from the file's bytes and named to ffmpeg explicitly,
with only local files allowed as inputs: a playlist or concat file posing as
audio cannot make ffmpeg read other files.
"""

import hashlib
import subprocess
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import filetype
import imageio_ffmpeg
import numpy as np

with warnings.catch_warnings():
    # pydub looks for ffmpeg on PATH at import and warns; we hand it the wheel's binary below.
    warnings.filterwarnings("ignore", message="Couldn't find ffmpeg", category=RuntimeWarning)
    from pydub import AudioSegment

from annotation.ingest.checks import SignalWarning, check_signal
from annotation.refusals import Refused

FFMPEG = imageio_ffmpeg.get_ffmpeg_exe()
AudioSegment.converter = FFMPEG

# filetype's extension -> ffmpeg demuxer
DEMUXERS = {
    "wav": "wav",
    "flac": "flac",
    "mp3": "mp3",
    "ogg": "ogg",
    "m4a": "mov",
    "mp4": "mov",
    "mov": "mov",
    "3gp": "mov",
    "webm": "matroska",
    "mkv": "matroska",
    "aiff": "aiff",
    "aac": "aac",
    "amr": "amr",
}
BROWSER_BITRATE = "96k"
DECODE_TIMEOUT_SECONDS = 120


class AudioRefused(Refused, ValueError):
    """The file is not usable audio; the message says why."""


@dataclass
class ProcessedAudio:
    duration: float
    sample_rate: int
    channels: int
    model_wav: Path
    browser_mp3: Path
    warnings: list[SignalWarning] = field(default_factory=list)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def sniff_demuxer(path: Path) -> str:
    kind = filetype.guess(str(path))
    if kind is None:
        raise AudioRefused("not an audio file (its content matches no audio format)")
    if kind.extension not in DEMUXERS:
        raise AudioRefused(f"not an audio file (its content is {kind.mime})")
    return DEMUXERS[kind.extension]


# The source's tags (title, artist, comments, chapters, cover art) stay out of
# what is served: participants must learn nothing about a clip but its sound.
# (bitexact also leaves out the "encoder" tag naming ffmpeg's version.)
NO_METADATA = ("-map_metadata", "-1", "-map_chapters", "-1", "-fflags", "+bitexact", "-flags:a", "+bitexact")


def convert(path: Path, staging: Path, *, max_seconds: float) -> tuple[Path, Path, Path]:
    """One ffmpeg run, three outputs: a 16-bit WAV at the native rate for the
    checks, the 16 kHz mono 16-bit WAV for models, and the browser's MP3.
    (One process instead of three halves the import time: spawning ffmpeg and
    re-reading the audio cost more than the conversions themselves.)"""
    demuxer = sniff_demuxer(path)
    decoded, model_wav, browser_mp3 = staging / "decoded.wav", staging / "model.wav", staging / "browser.mp3"
    command = [
        FFMPEG,
        "-nostdin",
        "-hide_banner",
        "-v",
        "error",
        "-y",
        "-protocol_whitelist",
        "file",
        "-t",
        f"{max_seconds + 1:.3f}",
        "-f",
        demuxer,
        "-i",
        str(path),
        "-map",
        "0:a:0",
        "-acodec",
        "pcm_s16le",
        "-f",
        "wav",
        str(decoded),
        *NO_METADATA,
        "-map",
        "0:a:0",
        "-ar",
        "16000",
        "-ac",
        "1",
        "-acodec",
        "pcm_s16le",
        "-f",
        "wav",
        str(model_wav),
        *NO_METADATA,
        "-map",
        "0:a:0",
        "-b:a",
        BROWSER_BITRATE,
        "-f",
        "mp3",
        str(browser_mp3),
    ]
    try:
        result = subprocess.run(command, capture_output=True, timeout=DECODE_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        raise AudioRefused("undecodable audio (decoding took too long)") from None
    if result.returncode != 0 or not decoded.exists() or decoded.stat().st_size <= 44:
        reason = result.stderr.decode(errors="replace").strip().splitlines()
        raise AudioRefused(f"undecodable audio ({reason[-1] if reason else 'no audio stream'})")
    return decoded, model_wav, browser_mp3


def process_audio(
    path: Path, staging: Path, *, max_seconds: float, word_times: list[tuple[float, float]]
) -> ProcessedAudio:
    """Decode, check and convert one file; outputs go to `staging`."""
    staging.mkdir(parents=True, exist_ok=True)
    decoded, model_wav, browser_mp3 = convert(path, staging, max_seconds=max_seconds)
    segment = AudioSegment.from_wav(decoded)
    decoded.unlink()
    if segment.frame_count() == 0:
        raise AudioRefused("undecodable audio (no samples)")
    if segment.duration_seconds > max_seconds:
        raise AudioRefused(f"clip is longer than {max_seconds:g} s (IMPORT_MAX_CLIP_SECONDS)")
    samples = np.frombuffer(segment.raw_data, dtype=np.int16).reshape(-1, segment.channels)
    return ProcessedAudio(
        duration=round(segment.duration_seconds, 4),
        sample_rate=segment.frame_rate,
        channels=segment.channels,
        model_wav=model_wav,
        browser_mp3=browser_mp3,
        warnings=check_signal(samples, segment.frame_rate, word_times),
    )
