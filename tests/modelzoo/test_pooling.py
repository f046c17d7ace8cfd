"""Frames and tokens back to words (pure: no torch)."""

import numpy as np
import pytest

from modelzoo.training.data import Word
from modelzoo.training.pooling import frame_targets, frames_to_words, tokens_to_words, word_frame_ranges

FRAME = 0.02  # 20 ms frames, as XLS-R's


def word(start, end, binary=0, scalar=0.0):
    return Word("w", start, end, binary, scalar)


def test_a_word_owns_the_frames_whose_centres_it_covers():
    # centres at 0.01, 0.03, 0.05, ...: [0.02, 0.08) holds the centres of frames 1, 2, 3
    assert word_frame_ranges([word(0.02, 0.08)], 10, FRAME) == [(1, 4)]
    # a word shorter than a frame still gets the frame its midpoint is in
    assert word_frame_ranges([word(0.101, 0.104)], 10, FRAME) == [(5, 6)]
    # times past the end are clipped to the clip's frames
    assert word_frame_ranges([word(0.15, 0.5)], 10, FRAME) == [(7, 10)]


def test_frame_targets_label_words_and_leave_silence_at_zero():
    binary, scalar = frame_targets([word(0.02, 0.06, 1, 0.8), word(0.1, 0.14, 0, 0.2)], 8, FRAME)
    assert binary.tolist() == [0, 1, 1, 0, 0, 0, 0, 0]
    assert scalar.tolist() == pytest.approx([0, 0.8, 0.8, 0, 0, 0.2, 0.2, 0])


@pytest.mark.parametrize(("emphasized_frames", "expected"), [(3, 1), (2, 0), (1, 0)])
def test_a_word_is_emphasized_when_more_than_half_of_its_frames_are(emphasized_frames, expected):
    frames = np.zeros(6, dtype=int)
    frames[1 : 1 + emphasized_frames] = 1  # the word owns frames 1..4 (four frames)
    binary, _ = frames_to_words(frames, np.zeros(6), [word(0.02, 0.10)], FRAME)
    assert binary == [expected]  # exactly half (2 of 4) is not more than half


def test_a_words_scalar_score_is_the_mean_of_its_frames():
    scores = np.array([0.9, 0.2, 0.4, 0.6, 0.9])
    _, scalar = frames_to_words(np.zeros(5, dtype=int), scores, [word(0.02, 0.08)], FRAME)
    assert scalar == [pytest.approx(0.4)]


def test_tokens_back_to_words_by_rule():
    probability = np.array([0.9, 0.2, 0.7, 0.1, 0.3, 0.0])
    scalar = np.array([0.0, 0.2, 0.6, 0.4, 0.8, 0.0])
    token_word = np.array([-1, 0, 0, 1, 1, -1])  # prompt, word 0 in two tokens, word 1 in two, padding
    assert tokens_to_words(probability, scalar, token_word, 3, "any") == ([1, 0, 0], pytest.approx([0.4, 0.6, 0.0]))
    assert tokens_to_words(probability, scalar, token_word, 3, "first")[0] == [0, 0, 0]
    assert tokens_to_words(probability, scalar, token_word, 3, "mean")[0] == [0, 0, 0]
    assert tokens_to_words(np.array([0, 0.8, 0.7]), scalar[:3], token_word[:3], 1, "mean")[0] == [1]
    with pytest.raises(ValueError, match="unknown token rule"):
        tokens_to_words(probability, scalar, token_word, 3, "last")
