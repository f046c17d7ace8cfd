"""Word times by forced alignment (pocketsphinx, English only), checked on the committed demo
corpus: English sentences synthesized by espeak-ng, whose own word events give the true times."""

import json
from pathlib import Path

import numpy as np
import pytest

from modelzoo.training.alignment import WordTimesMissing, align_words, ensure_word_times
from modelzoo.training.data import SAMPLE_RATE, Clip, Word, read_wav

pytest.importorskip("pocketsphinx")

DEMO_CORPUS = Path(__file__).resolve().parents[2] / "annotation" / "demo_corpus"


def demo_clip(clip_id: str) -> tuple[np.ndarray, list[dict]]:
    rows = (json.loads(line) for line in (DEMO_CORPUS / "manifest.jsonl").read_text().splitlines())
    row = next(row for row in rows if row["id"] == clip_id)
    return read_wav(DEMO_CORPUS / row["audio"]), row["words"]  # 22.05 kHz WAV, resampled on reading


@pytest.mark.parametrize("clip_id", ["demo-en-022", "demo-en-026"])
def test_english_speech_is_aligned_close_to_the_synthesizers_word_times(clip_id):
    audio, words = demo_clip(clip_id)
    aligned = align_words(audio, [word["text"] for word in words])
    for (start, end), word in zip(aligned, words, strict=True):
        assert abs(start - word["start"]) < 0.08 and abs(end - word["end"]) < 0.1, word["text"]


def test_punctuation_gets_the_time_where_the_last_word_ended():
    audio, words = demo_clip("demo-en-022")
    aligned = align_words(audio, [*[word["text"] for word in words], "—"])
    assert len(aligned) == len(words) + 1
    assert aligned[-1][0] == aligned[-1][1] == aligned[-2][1]
    assert all(0 <= start <= end <= len(audio) / SAMPLE_RATE for start, end in aligned)


def test_untimed_english_clips_are_aligned_and_other_languages_refused():
    audio, words = demo_clip("demo-en-022")
    timed = Clip(
        "en-1", "en", "train", tuple(Word(w["text"], w["start"], w["end"], 0, 0.0) for w in words), samples=audio
    )
    untimed = Clip("en-2", "en-GB", "train", tuple(Word(w["text"], None, None, 0, 0.0) for w in words), samples=audio)
    done = ensure_word_times([timed, untimed], needed_by="This detector")
    assert done[0] is timed and done[1].has_word_times
    german = Clip("de-7", "de", "test", (Word("Haus", None, None, 0, 0.0),), samples=audio)
    with pytest.raises(WordTimesMissing, match=r"This detector needs word times.*de-7 \(de\)"):
        ensure_word_times([timed, german], needed_by="This detector")
