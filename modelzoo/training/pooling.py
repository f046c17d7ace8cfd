"""Between words and the units the neural detectors label: frames (the frame classifier) and
tokens (the Whisper token detector). Pure numpy.

Frames: frame i stands for the audio around its centre, (i + 0.5) * frame_seconds; a word owns
the frames whose centres fall in [start, end). A word too short to own a centre gets the frame
its midpoint lies in, so every timed word has at least one frame.
"""

from collections.abc import Sequence

import numpy as np

from modelzoo.training.data import Word

IGNORE = -100  # the label of padding: left out of every loss (torch's ignore_index)


def word_frame_ranges(words: Sequence[Word], frames: int, frame_seconds: float) -> list[tuple[int, int]]:
    """(first, end) frame indices of each timed word, end exclusive, clipped to the clip's frames."""
    ranges = []
    for word in words:
        start_seconds, end_seconds = word.times
        first = int(np.ceil(start_seconds / frame_seconds - 0.5))
        end = int(np.ceil(end_seconds / frame_seconds - 0.5))
        first, end = max(0, min(first, frames)), max(0, min(end, frames))
        if end <= first:
            middle = min(frames - 1, int((start_seconds + end_seconds) / 2 / frame_seconds))
            first, end = middle, middle + 1
        ranges.append((first, end))
    return ranges


def frame_targets(words: Sequence[Word], frames: int, frame_seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """(binary, scalar) label per frame: the label of the word owning the frame, 0 between words
    (silence is not emphasis)."""
    binary, scalar = np.zeros(frames, dtype=np.int64), np.zeros(frames, dtype=np.float32)
    for word, (first, end) in zip(words, word_frame_ranges(words, frames, frame_seconds)):
        binary[first:end], scalar[first:end] = word.binary, word.scalar
    return binary, scalar


def frames_to_words(
    frame_binary: np.ndarray, frame_scalar: np.ndarray, words: Sequence[Word], frame_seconds: float
) -> tuple[list[int], list[float]]:
    """Word labels from frame predictions: a word is emphasized when MORE than half of its frames
    are (EmphaClass); its scalar score is the mean of its frames' scores."""
    binary, scalar = [], []
    for first, end in word_frame_ranges(words, len(frame_binary), frame_seconds):
        binary.append(int(np.mean(frame_binary[first:end]) > 0.5))
        scalar.append(float(np.mean(frame_scalar[first:end])))
    return binary, scalar


# --- tokens ---

TOKEN_RULES = ("any", "first", "mean")


def tokens_to_words(
    token_probability: np.ndarray, token_scalar: np.ndarray, token_word: np.ndarray, words: int, rule: str = "any"
) -> tuple[list[int], list[float]]:
    """Word labels from token predictions; `token_word` gives each token's word index (-1 for the
    prompt and padding). Binary: with "any" (WhiStress's merge of sub-word tokens) a word is
    emphasized when any of its tokens is, with "first" when its first token is, with "mean" when
    the mean emphasis probability of its tokens is over 0.5. Scalar: the mean over its tokens.
    A word without tokens (cut off at the decoder's length limit) gets 0 and 0.0."""
    if rule not in TOKEN_RULES:
        raise ValueError(f"unknown token rule {rule!r}; one of {', '.join(TOKEN_RULES)}")
    binary, scalar = [0] * words, [0.0] * words
    for index in range(words):
        mine = np.flatnonzero(token_word == index)
        if mine.size == 0:
            continue
        probabilities = token_probability[mine]
        chosen = {"any": probabilities.max(), "first": probabilities[0], "mean": probabilities.mean()}[rule]
        binary[index] = int(chosen > 0.5)
        scalar[index] = float(token_scalar[mine].mean())
    return binary, scalar
