"""Word times for clips that have none: forced alignment of the transcript with pocketsphinx,
which ships an English acoustic model, dictionary and language model. Other languages have no
aligner here, so a detector that needs word times refuses their untimed clips with a message
(the Whisper token detector needs no times and runs on them).

Leading and trailing silence is cut with silero-vad when it is installed, so the aligner spends
no phones on it; without silero-vad the whole clip is aligned.
"""

import re
from collections.abc import Iterable, Sequence
from functools import cache

import numpy as np

from modelzoo.training.data import SAMPLE_RATE, Clip

ALIGNABLE_LANGUAGES = ("en",)
FRAMES_PER_SECOND = 100  # pocketsphinx's default frame rate
NOISE_FLOOR = 1e-3  # standard deviation, full scale = 1 (-60 dB)
NOT_WORDS = {"<s>", "</s>", "<sil>", "[NOISE]", "(NULL)"}

# A rough letter -> phone spelling for words missing from the dictionary (names, rare words):
# the aligner only needs some phones of about the right length to place the word.
LETTER_PHONES = {
    "a": "AE",
    "b": "B",
    "c": "K",
    "d": "D",
    "e": "EH",
    "f": "F",
    "g": "G",
    "h": "HH",
    "i": "IH",
    "j": "JH",
    "k": "K",
    "l": "L",
    "m": "M",
    "n": "N",
    "o": "AA",
    "p": "P",
    "q": "K",
    "r": "R",
    "s": "S",
    "t": "T",
    "u": "AH",
    "v": "V",
    "w": "W",
    "x": "K S",
    "y": "Y",
    "z": "Z",
}


class WordTimesMissing(ValueError):
    """Clips without word times that cannot be aligned here."""


class AlignmentFailed(RuntimeError):
    pass


def can_align(language: str) -> bool:
    return language.split("-", maxsplit=1)[0].lower() in ALIGNABLE_LANGUAGES and pocketsphinx_installed()


@cache
def pocketsphinx_installed() -> bool:
    try:
        import pocketsphinx  # noqa: F401
    except ImportError:
        return False
    return True


def ensure_word_times(clips: Iterable[Clip], *, needed_by: str) -> list[Clip]:
    """The clips with word times: those that have them as they are, untimed English clips
    aligned. WordTimesMissing (naming the clips) for untimed clips of other languages."""
    clips = list(clips)
    refused = [clip for clip in clips if not clip.has_word_times and not can_align(clip.language)]
    if refused:
        names = ", ".join(f"{clip.clip_id} ({clip.language or 'no language'})" for clip in refused[:5])
        more = f" and {len(refused) - 5} more" if len(refused) > 5 else ""
        reason = "" if pocketsphinx_installed() else " (pocketsphinx, the English aligner, is not installed)"
        raise WordTimesMissing(
            f"{needed_by} needs word times, and {len(refused)} clips have none and cannot be aligned{reason}: "
            f"{names}{more}. Only English clips are aligned here; add word times to the corpus, or use the "
            "Whisper token detector, which needs none."
        )
    return [clip if clip.has_word_times else _aligned(clip) for clip in clips]


def _aligned(clip: Clip) -> Clip:
    try:
        return clip.with_word_times(align_words(clip.audio, clip.words))
    except AlignmentFailed as error:
        raise AlignmentFailed(f"clip {clip.clip_id!r}: {error}; add word times for it, or leave it out") from error


def align_words(audio: np.ndarray, words: Sequence, *, trim_silence: bool = True) -> list[tuple[float, float]]:
    """(start, end) in seconds for each word (Word objects or strings) of an English transcript."""
    texts = [getattr(word, "text", word) for word in words]
    offset = 0.0
    if trim_silence:
        bounds = speech_bounds(audio)
        if bounds is not None:
            offset = bounds[0]
            audio = audio[int(bounds[0] * SAMPLE_RATE) : int(bounds[1] * SAMPLE_RATE)]
    spoken = [_dictionary_form(text) for text in texts]
    segments = _pocketsphinx_segments(audio, [word for word in spoken if word])
    times = iter(segments)
    placed: list[tuple[float, float]] = []
    for word in spoken:
        # a word that is only punctuation gets no time of its own: it sits where the last one ended
        start, end = next(times) if word else ((placed[-1][1],) * 2 if placed else (0.0, 0.0))
        placed.append((start, end))
    return [(round(float(start) + offset, 3), round(float(end) + offset, 3)) for start, end in placed]


def _dictionary_form(text: str) -> str:
    return re.sub(r"[^a-z']", "", text.lower()).strip("'")


def _pocketsphinx_segments(audio: np.ndarray, words: list[str]) -> list[tuple[float, float]]:
    """(start, end) per word. The alignment grammar with optional silences between words is tried
    first; on some clips its search dies part way (it then returns only the first words), and the
    grammar without them, which always reaches the end, is used instead. Silence it swallowed
    into words is cut off again by trim_to_sound."""
    # A faint noise floor: stretches of digital silence (exact zeros, as synthesized or edited
    # audio has) give the front end degenerate log energies, and the search then fails.
    floor = np.random.default_rng(0).normal(0.0, NOISE_FLOOR, size=len(audio))
    pcm = (np.clip(audio + floor, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    for with_silences in (True, False):
        segments = _align(_decoder(with_silences), pcm, words)
        if len(segments) == len(words):
            return trim_to_sound(audio, segments)
    raise AlignmentFailed(f"the aligner placed {len(segments)} of {len(words)} words")


def _align(decoder, pcm: bytes, words: list[str]) -> list[tuple[float, float]]:
    for word in set(words):
        if decoder.lookup_word(word) is None:
            decoder.add_word(word, _spelled_phones(word), True)
    decoder.set_align_text(" ".join(words))
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()
    return [
        (seg.start_frame / FRAMES_PER_SECOND, (seg.end_frame + 1) / FRAMES_PER_SECOND)
        for seg in decoder.seg() or ()
        if seg.word not in NOT_WORDS
    ]


@cache
def _decoder(with_silences: bool):
    """One decoder of each kind for the process: loading the English models takes most of a second."""
    from pocketsphinx import Decoder

    # bestpath and fwdflat are second passes meant for n-gram search; on an alignment grammar the
    # lattice pass can drop the last words
    return Decoder(
        samprate=SAMPLE_RATE, lm=None, fsgusefiller=with_silences, bestpath=False, fwdflat=False, loglevel="FATAL"
    )


def trim_to_sound(
    audio: np.ndarray, segments: list[tuple[float, float]], floor_db: float = 35.0
) -> list[tuple[float, float]]:
    """Each word's span without its quiet edges: 10 ms frames more than `floor_db` below the
    clip's loudest frame. A word with no loud frame keeps its span."""
    hop = SAMPLE_RATE // FRAMES_PER_SECOND
    frames = len(audio) // hop
    if frames == 0:
        return segments
    energy = (audio[: frames * hop].reshape(frames, hop).astype(np.float64) ** 2).mean(axis=1)
    db = 10 * np.log10(energy + 1e-12)
    loud = db > db.max() - floor_db
    trimmed = []
    for start, end in segments:
        first, last = round(start * FRAMES_PER_SECOND), round(end * FRAMES_PER_SECOND)
        inside = np.flatnonzero(loud[first:last])
        if inside.size:
            start, end = (first + inside[0]) / FRAMES_PER_SECOND, (first + inside[-1] + 1) / FRAMES_PER_SECOND
        trimmed.append((start, end))
    return trimmed


def _spelled_phones(word: str) -> str:
    return " ".join(LETTER_PHONES[letter] for letter in word if letter in LETTER_PHONES) or "AH"


def speech_bounds(audio: np.ndarray) -> tuple[float, float] | None:
    """(first speech start, last speech end) in seconds by silero-vad; None when silero-vad is
    not installed or hears no speech."""
    model = _silero_model()
    if model is None:
        return None
    import torch
    from silero_vad import get_speech_timestamps

    spans = get_speech_timestamps(
        torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32)),
        model,
        sampling_rate=SAMPLE_RATE,
        return_seconds=True,
    )
    if not spans:
        return None
    # a little margin: the VAD cuts close, and the aligner wants the word's onset whole
    return max(0.0, spans[0]["start"] - 0.05), min(len(audio) / SAMPLE_RATE, spans[-1]["end"] + 0.05)


@cache
def _silero_model():
    try:
        from silero_vad import load_silero_vad
    except ImportError:
        return None
    return load_silero_vad()
