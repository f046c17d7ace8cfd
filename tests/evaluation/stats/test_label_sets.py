"""Label-set arithmetic: word labels, splits, nested data-scale subsets, arousal (pure, no database)."""

import random
from collections import Counter

import numpy as np
import pytest

from evaluation.stats.label_sets import (
    MMEE_AROUSAL,
    SplitClip,
    SplitRefused,
    arousal_of,
    assign_splits,
    check_arousal_mapping,
    emotions_without_arousal,
    scale_steps,
    word_labels,
)


def test_word_labels_by_hand():
    # 4 annotators, 3 words: word 0 marked by 3 (binary yes), word 1 by exactly half (no), word 2 by none.
    labels = word_labels(np.array([[1, 2, 0], [2, 0, 0], [1, 1, 0], [0, 0, 0]]))

    assert labels.binary == [True, False, False]
    assert labels.scalar == [(0.5 + 1 + 0.5 + 0) / 4, (1 + 0.5) / 4, 0.0]
    assert labels.annotators == 4


def corpus(languages=("en", "de", "zh"), per_variety=(37, 21), speakers_per_variety=6):
    clips = []
    for language in languages:
        for v, size in enumerate(per_variety):
            for i in range(size):
                clips.append(
                    SplitClip(
                        f"{language}-{v}-{i:03d}",
                        language,
                        f"{language}-V{v}",
                        f"{language}-{v}-spk{i % speakers_per_variety}",
                    )
                )
    return clips


def test_splits_per_language_are_within_one_clip_of_80_10_10_and_spread_over_varieties():
    clips = corpus()
    splits = assign_splits(clips, seed=7)

    assert set(splits) == {c.key for c in clips} and set(splits.values()) == {"train", "validation", "test"}
    for language in ("en", "de", "zh"):
        counts = Counter(splits[c.key] for c in clips if c.language == language)
        total = sum(counts.values())
        for split, share in (("train", 0.8), ("validation", 0.1), ("test", 0.1)):
            assert abs(counts[split] - share * total) <= 1, (language, split, counts)
    for variety in ("en-V0", "en-V1"):
        members = [c for c in clips if c.variety == variety]
        train = sum(splits[c.key] == "train" for c in members)
        assert abs(train - 0.8 * len(members)) <= 2


def test_splits_depend_on_the_seed_and_keys_only():
    clips = corpus()
    shuffled = clips[:]
    random.Random(3).shuffle(shuffled)

    assert assign_splits(shuffled, seed=7) == assign_splits(clips, seed=7)
    assert assign_splits(clips, seed=8) != assign_splits(clips, seed=7)


def test_by_speaker_keeps_each_speaker_in_one_split():
    clips = corpus()
    splits = assign_splits(clips, seed=1, by_speaker=True)

    by_speaker = {}
    for clip in clips:
        by_speaker.setdefault(clip.speaker, set()).add(splits[clip.key])
    assert all(len(seen) == 1 for seen in by_speaker.values())
    counts = Counter(splits[c.key] for c in clips if c.language == "en")
    assert counts["train"] > counts["validation"] > 0 and counts["test"] > 0


def test_clips_without_a_speaker_are_speakers_of_their_own():
    clips = [SplitClip(f"c{i}", "en", "", "") for i in range(20)]

    assert Counter(assign_splits(clips, seed=0, by_speaker=True).values()) == {"train": 16, "validation": 2, "test": 2}


def test_bad_proportions_are_refused():
    with pytest.raises(ValueError, match="adding up to 1"):
        assign_splits(corpus(), seed=0, proportions=(0.8, 0.1, 0.2))


def test_scale_subsets_are_nested_and_sized_per_language():
    train = corpus()
    steps = scale_steps(train, seed=4)

    previous: set[str] = set()
    for step in (10, 20, 30, 40, 50, 60, 70, 80, 90, 100):
        subset = {key for key, smallest in steps.items() if smallest <= step}
        assert previous <= subset
        for language in ("en", "de", "zh"):
            size = sum(1 for c in train if c.language == language)
            assert sum(1 for c in train if c.language == language and c.key in subset) == round(step * size / 100)
        previous = subset
    assert previous == {c.key for c in train}


def test_scale_steps_must_end_at_100():
    with pytest.raises(ValueError, match="ending at 100"):
        scale_steps(corpus(), seed=0, steps=(10, 50))


def test_arousal_from_mmee_lists_and_a_custom_mapping():
    assert arousal_of("Anger") == "high" and arousal_of(" sadness ") == "low" and arousal_of("neutral") == ""
    assert len(MMEE_AROUSAL["high"]) == len(MMEE_AROUSAL["low"]) == 9
    assert arousal_of("whisper", {"low": ["Whisper"]}) == "low"
    with pytest.raises(ValueError, match="both arousal lists: joy"):
        check_arousal_mapping({"high": ["joy"], "low": ["Joy"]})


def test_by_speaker_refuses_to_leave_validation_and_test_empty():
    # Two speakers per language: each in one split fills train only (issue 20: 8/0/0 and 12/0/0).
    clips = [
        SplitClip(f"{lang}{i}", lang, "", f"{lang}-s{i % 2}") for lang, n in (("en", 8), ("de", 12)) for i in range(n)
    ]
    clips += [SplitClip(f"zh{i}", "zh", "", f"zh-s{i}") for i in range(10)]  # ten speakers: fine

    with pytest.raises(SplitRefused) as caught:
        assign_splits(clips, seed=0, by_speaker=True)

    message = str(caught.value)
    assert "de (2 speakers: validation and test empty)" in message
    assert "en (2 speakers: validation and test empty)" in message
    assert "zh" not in message
    assert set(caught.value.languages) == {"de", "en"}


@pytest.mark.parametrize(
    ("emotion", "arousal"),
    [
        ("angry", "high"),
        ("Happy", "high"),
        ("afraid", "high"),
        ("excited", "high"),
        ("anxious", "high"),
        ("sad", "low"),
        ("calm", "low"),
        ("bored", "low"),
        ("relieved", "low"),
        ("love", "low"),
        ("neutral", ""),
        ("", ""),
    ],
)
def test_common_forms_of_mmees_emotions_have_their_arousal(emotion, arousal):
    # The README's manifest example says `angry`; MMEE's lists say "anger" (issue 20, defect 6).
    assert arousal_of(emotion) == arousal


def test_a_custom_mapping_counts_the_common_forms_of_its_emotions():
    assert arousal_of("angry", {"low": ["anger"]}) == "low"
    assert arousal_of("angry", {"high": ["sadness"]}) == ""


def test_emotions_the_mapping_does_not_cover_are_counted():
    emotions = ["angry", "neutral", "Neutral ", "whisper", "", "sad"]

    assert emotions_without_arousal(emotions) == {"neutral": 2, "whisper": 1}
