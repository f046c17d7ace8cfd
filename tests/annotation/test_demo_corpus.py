"""The committed synthetic demo corpus and the espeak-ng wrapper that made it.

Plain pytest functions: no Django setup and no database are needed.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from annotation.demo import espeak
from annotation.demo.make_demo_corpus import (
    Prosody,
    build_ssml,
    random_emphasis_prosody,
    word_start_samples,
)

CORPUS_DIR = Path(__file__).resolve().parents[2] / "annotation" / "demo_corpus"
MANIFEST_KEYS = {
    "id",
    "audio",
    "transcript",
    "words",
    "language",
    "variety",
    "speaker",
    "emotion",
    "synthetic",
    "intended_emphasis",
    "generator",
    "prosody",
    "loudness_distractor",
}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    lines = (CORPUS_DIR / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def require_espeak() -> None:
    if not espeak.is_available():
        pytest.skip(f"{espeak.LIBRARY_NAME} is not available on this machine")


def test_manifest_has_at_least_60_synthetic_clips_with_unique_ids(rows):
    assert len(rows) >= 60
    assert all(row["synthetic"] is True for row in rows)
    assert len({row["id"] for row in rows}) == len(rows)


def test_manifest_rows_have_exactly_the_documented_keys(rows):
    for row in rows:
        assert set(row) == MANIFEST_KEYS, row["id"]


def test_every_audio_file_exists(rows):
    missing = [row["audio"] for row in rows if not (CORPUS_DIR / row["audio"]).is_file()]
    assert missing == []


def test_audio_formats_are_mixed(rows):
    extensions = {Path(row["audio"]).suffix for row in rows}
    assert {".mp3", ".ogg", ".flac", ".wav"} <= extensions


def test_words_are_the_transcript_tokens_in_order(rows):
    for row in rows:
        assert [word["text"] for word in row["words"]] == row["transcript"].split(), row["id"]


def test_word_times_are_rounded_positive_and_ordered(rows):
    for row in rows:
        words = row["words"]
        for word in words:
            assert 0 <= word["start"] < word["end"], (row["id"], word)
            assert round(word["start"], 3) == word["start"] and round(word["end"], 3) == word["end"]
        starts = [word["start"] for word in words]
        assert starts == sorted(starts), row["id"]


def test_intended_emphasis_indexes_existing_words(rows):
    for row in rows:
        emphasis = row["intended_emphasis"]
        assert emphasis, row["id"]
        assert all(isinstance(i, int) and 0 <= i < len(row["words"]) for i in emphasis), row["id"]


def decoded_duration(path: Path) -> float:
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    command = [
        imageio_ffmpeg.get_ffmpeg_exe(),
        "-v",
        "error",
        "-i",
        str(path),
        "-f",
        "s16le",
        "-ac",
        "1",
        "-ar",
        "22050",
        "-",
    ]
    pcm = subprocess.run(command, capture_output=True, check=True).stdout
    return len(pcm) / 2 / 22050


def test_last_word_ends_within_the_decoded_audio(rows):
    for row in rows:
        duration = decoded_duration(CORPUS_DIR / row["audio"])
        assert row["words"][-1]["end"] <= duration, (row["id"], duration)


def test_build_ssml_spans_point_at_the_tokens():
    tokens = ["¿Dónde", "está", "la", "pequeña", "estación?"]
    emphasis = Prosody(pitch="+30%", rate="70%", volume="+40%")
    ssml, spans = build_ssml(tokens, {0: emphasis}, Prosody(pitch="+0%", rate="100%"))
    assert [ssml[start:end] for start, end in spans] == tokens
    assert '<prosody pitch="+30%" rate="70%" volume="+40%">¿Dónde</prosody>' in ssml


def test_espeak_reports_one_word_event_per_word_in_order():
    require_espeak()
    tokens = ["Please", "read", "this", "short", "sentence", "aloud"]
    prefix = "<speak>"
    synthesis = espeak.synthesize_ssml(f"{prefix}{' '.join(tokens)}.</speak>", "en-us")

    assert synthesis.sample_rate == 22050
    assert synthesis.samples.dtype.name == "int16"
    assert synthesis.duration > 0.5
    words = [event for event in synthesis.words if event.length > 0]  # skip zero-length extras
    assert len(words) == len(tokens)
    text = f"{prefix}{' '.join(tokens)}."
    assert [text[w.text_position : w.text_position + w.length] for w in words] == tokens
    samples = [word.sample for word in words]
    assert samples == sorted(set(samples))
    assert samples[-1] < len(synthesis.samples)


def test_emphasized_sentence_aligns_one_start_per_token():
    require_espeak()
    tokens = ["My", "sister", "bought", "a", "red", "bicycle", "yesterday."]
    emphasis = random_emphasis_prosody(random.Random(7))
    ssml, spans = build_ssml(tokens, {5: emphasis}, Prosody(pitch="-5%", rate="105%"))
    synthesis = espeak.synthesize_ssml(ssml, "en-gb-scotland")
    starts = word_start_samples(spans, synthesis.words)
    assert len(starts) == len(tokens)
    assert starts == sorted(set(starts))


def test_unknown_voice_is_a_clear_error():
    require_espeak()
    with pytest.raises(espeak.EspeakError, match="no voice"):
        espeak.synthesize_ssml("<speak>Hello there.</speak>", "no-such-voice")
