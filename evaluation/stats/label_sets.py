"""The arithmetic of label sets: word labels, train/validation/test splits, nested training
subsets for the data-scale experiment, and arousal subsets (MMEE, sections 3 and 4).

Pure Python and numpy. Every choice is a function of the seed and of the clips' own keys, never
of the order rows arrive in, so the same data and seed give the same set on any database.

- Labels: `evaluation.stats.aggregation`'s rules (binary: more than half of the annotators
  marked the word; scalar: mean of 0, 0.5, 1).
- Splits: per language, 80/10/10 by default. The clips of a language are put in one order that
  spreads every variety evenly (each variety shuffled by a keyed hash, then interleaved by
  relative position), and cut at round(0.8 N) and round(0.9 N): each split is within one clip of
  its share of the language, and each variety is split in nearly the same proportions. With
  `by_speaker`, a speaker's clips all go to one split: speakers (ordered the same way, by the
  variety most of their clips have) go one by one to the split furthest below its share, so
  the proportions hold only as closely as speaker sizes allow. Clips without a speaker count
  as speakers of their own.
- Data scale: the training clips of each language in one variety-spreading order (another
  key); the subset at p % is the first round(p N / 100) of that order, so a smaller subset is
  always inside a larger one. Each clip records the smallest step whose subset holds it.
- Arousal: an emotion -> "high" / "low" mapping; MMEE's circumplex lists are the default.
"""

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from annotation.refusals import Refused
from evaluation.stats.aggregation import binary_labels, keyed_priority, level_counts, scalar_labels

SPLITS = ("train", "validation", "test")
DEFAULT_PROPORTIONS = (0.8, 0.1, 0.1)
SCALE_STEPS = (10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
# MMEE section 4.3, after the arousal dimension of Russell's circumplex model.
MMEE_AROUSAL = {
    "high": ("excitement", "happiness", "pride", "determination", "anger", "fear", "anxiety", "frustration", "disgust"),
    "low": (
        "calmness",
        "relief",
        "love/affection",
        "hopefulness",
        "sadness",
        "boredom",
        "shame",
        "embarrassment",
        "contempt",
    ),
}


@dataclass(frozen=True)
class WordLabels:
    binary: list[bool]
    scalar: list[float]
    annotators: int


def word_labels(levels: np.ndarray) -> WordLabels:
    """(annotators x words) levels of one clip to its per-word binary and scalar labels."""
    counts = level_counts(np.asarray(levels, dtype=np.int64))
    return WordLabels(
        binary=[bool(value) for value in binary_labels(counts)],
        scalar=[float(value) for value in scalar_labels(counts)],
        annotators=int(np.asarray(levels).shape[0]),
    )


@dataclass(frozen=True)
class SplitClip:
    key: str
    language: str
    variety: str
    speaker: str  # "" when unknown


def check_proportions(proportions: Sequence[float]) -> tuple[float, float, float]:
    if len(proportions) != 3 or any(p < 0 for p in proportions) or not np.isclose(sum(proportions), 1.0):
        raise ValueError("proportions must be three non-negative shares (train, validation, test) adding up to 1")
    train, validation, test = (float(p) for p in proportions)
    return train, validation, test


class SplitRefused(Refused, ValueError):
    """Keeping each speaker in one split would leave a split with a share empty in some languages."""

    def __init__(self, gaps: dict[str, tuple[int, list[str]]]):
        self.languages = sorted(gaps)
        described = ", ".join(
            f"{language or '(none)'} ({speakers} speaker{'s' if speakers != 1 else ''}: {' and '.join(empty)} empty)"
            for language, (speakers, empty) in sorted(gaps.items())
        )
        super().__init__(
            f"keeping each speaker in one split leaves splits empty in {described}; a language needs at least "
            "one speaker for every split with a share, and speakers with similar numbers of clips: add "
            "speakers, set the empty splits' shares to 0, or build without keeping speakers apart"
        )


def assign_splits(
    clips: Sequence[SplitClip], *, seed: int, proportions=DEFAULT_PROPORTIONS, by_speaker: bool = False
) -> dict[str, str]:
    """Clip key -> "train" | "validation" | "test", per language. With `by_speaker`, raises
    SplitRefused, naming the languages, rather than leave a split that has a share empty."""
    shares = check_proportions(proportions)
    result: dict[str, str] = {}
    gaps: dict[str, tuple[int, list[str]]] = {}
    for language, language_clips in _by_language(clips).items():
        if by_speaker:
            splits = _split_by_speaker(language_clips, seed=seed, shares=shares)
            # Only the splits that splitting clip by clip would fill: a language of three clips
            # has no test clip either way.
            filled = _clip_split_sizes(len(language_clips), shares)
            empty = [name for name in SPLITS if filled[name] and name not in splits.values()]
            if empty:
                gaps[language] = (len({c.speaker or f"\x00clip:{c.key}" for c in language_clips}), empty)
            result.update(splits)
        else:
            order = spread_order(
                [c.key for c in language_clips], [c.variety for c in language_clips], seed=seed, salt="split"
            )
            for position, index in enumerate(order):
                result[language_clips[index].key] = _split_at(position, len(order), shares)
    if gaps:
        raise SplitRefused(gaps)
    return result


def _clip_split_sizes(total: int, shares) -> dict[str, int]:
    """How many of `total` clips each split gets when clips are split one by one (_split_at)."""
    sizes = dict.fromkeys(SPLITS, 0)
    for position in range(total):
        sizes[_split_at(position, total, shares)] += 1
    return sizes


def _split_at(position: int, total: int, shares) -> str:
    train_end = round(shares[0] * total)
    validation_end = round((shares[0] + shares[1]) * total)
    if position < train_end:
        return "train"
    return "validation" if position < validation_end else "test"


def _split_by_speaker(clips: list[SplitClip], *, seed: int, shares) -> dict[str, str]:
    speakers: dict[str, list[SplitClip]] = defaultdict(list)
    for clip in clips:
        speakers[clip.speaker or f"\x00clip:{clip.key}"].append(clip)
    names = sorted(speakers)
    varieties = [Counter(c.variety for c in speakers[name]).most_common(1)[0][0] for name in names]
    targets = np.array(shares) * len(clips)
    filled = np.zeros(3)
    result = {}
    for index in spread_order(names, varieties, seed=seed, salt="split-speaker"):
        group = speakers[names[index]]
        split = int(np.argmax(targets - filled))  # the split furthest below its share; ties: train first
        filled[split] += len(group)
        result.update({clip.key: SPLITS[split] for clip in group})
    return result


def scale_steps(train: Sequence[SplitClip], *, seed: int, steps: Sequence[int] = SCALE_STEPS) -> dict[str, int]:
    """Training clip key -> the smallest percentage step whose nested subset holds it, per language."""
    steps = sorted(int(step) for step in steps)
    if not steps or steps[0] <= 0 or steps[-1] != 100:
        raise ValueError("scale steps must be positive percentages ending at 100")
    result = {}
    for language_clips in _by_language(train).values():
        order = spread_order(
            [c.key for c in language_clips], [c.variety for c in language_clips], seed=seed, salt="scale"
        )
        ends = [round(step * len(order) / 100) for step in steps]
        for position, index in enumerate(order):
            result[language_clips[index].key] = next(step for step, end in zip(steps, ends) if position < end)
    return result


# The other common names of MMEE's emotions (adjectives, and nouns MMEE does not use): a corpus
# whose manifest says "angry" or "sad" gets the arousal of "anger" or "sadness". A mapping that
# names a form itself takes it as written.
EMOTION_FORMS = {
    "excited": "excitement",
    "happy": "happiness",
    "joy": "happiness",
    "joyful": "happiness",
    "proud": "pride",
    "determined": "determination",
    "angry": "anger",
    "afraid": "fear",
    "fearful": "fear",
    "scared": "fear",
    "anxious": "anxiety",
    "frustrated": "frustration",
    "disgusted": "disgust",
    "calm": "calmness",
    "relieved": "relief",
    "love": "love/affection",
    "loving": "love/affection",
    "affection": "love/affection",
    "affectionate": "love/affection",
    "hopeful": "hopefulness",
    "hope": "hopefulness",
    "sad": "sadness",
    "bored": "boredom",
    "ashamed": "shame",
    "embarrassed": "embarrassment",
    "contemptuous": "contempt",
}


def arousal_of(emotion: str, mapping: Mapping[str, Sequence[str]] = MMEE_AROUSAL) -> str:
    """ "high", "low", or "" for an emotion in neither list (case and surrounding spaces ignored;
    a common form of an emotion in a list, EMOTION_FORMS, counts as that emotion)."""
    name = (emotion or "").strip().lower()
    lists = {regime: {value.strip().lower() for value in mapping.get(regime, ())} for regime in ("high", "low")}
    for candidate in (name, EMOTION_FORMS.get(name)):
        for regime in ("high", "low"):
            if candidate in lists[regime]:
                return regime
    return ""


def emotions_without_arousal(
    emotions: Sequence[str], mapping: Mapping[str, Sequence[str]] = MMEE_AROUSAL
) -> dict[str, int]:
    """Each emotion named but given no arousal by `mapping` -> how many of `emotions` it is, so that
    a set whose arousal is empty says why; clips without an emotion are not counted."""
    missed = Counter(
        (emotion or "").strip().lower()
        for emotion in emotions
        if (emotion or "").strip() and not arousal_of(emotion, mapping)
    )
    return dict(sorted(missed.items()))


def check_arousal_mapping(mapping: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    if set(mapping) - {"high", "low"}:
        raise ValueError('the arousal mapping may only have the keys "high" and "low"')
    high = {value.strip().lower() for value in mapping.get("high", ())}
    low = {value.strip().lower() for value in mapping.get("low", ())}
    if high & low:
        raise ValueError(f"emotions in both arousal lists: {', '.join(sorted(high & low))}")
    return {"high": sorted(high), "low": sorted(low)}


def spread_order(keys: Sequence[str], strata: Sequence[str], *, seed: int, salt: str) -> list[int]:
    """Indices of `keys` in an order that spreads every stratum evenly: each stratum shuffled by
    a keyed hash of (salt, key), then all interleaved by relative position (i + 0.5) / size."""
    members: dict[str, list[int]] = defaultdict(list)
    for index, stratum in enumerate(strata):
        members[stratum].append(index)
    placed = []
    for stratum, indices in members.items():
        indices.sort(key=lambda i: (keyed_priority(seed, salt, keys[i]), keys[i]))
        placed += [((rank + 0.5) / len(indices), stratum, keys[i], i) for rank, i in enumerate(indices)]
    return [entry[3] for entry in sorted(placed)]


def _by_language(clips: Sequence[SplitClip]) -> dict[str, list[SplitClip]]:
    languages: dict[str, list[SplitClip]] = defaultdict(list)
    for clip in sorted(clips, key=lambda c: c.key):
        languages[clip.language].append(clip)
    return dict(sorted(languages.items()))


@dataclass(frozen=True)
class LabelledClip:
    key: str
    annotators: list[str]  # annotator keys, sorted
    levels: np.ndarray  # (annotators x words) levels of the kept annotations
    labels: WordLabels


def labelled_clips(data, kept: np.ndarray) -> list[LabelledClip]:
    """The clips of a StudyData that have kept annotations, with their words' labels.
    `kept` selects annotations (evaluation.stats.selection); rows are already by clip, then annotator."""
    rows = np.flatnonzero(kept)
    result: list[LabelledClip] = []
    if rows.size == 0:
        return result
    clips = data.clip[rows]
    starts = np.flatnonzero(np.r_[True, clips[1:] != clips[:-1]])
    for begin, end in zip(starts, [*starts[1:], rows.size]):
        chosen = rows[begin:end]
        clip = int(data.clip[chosen[0]])
        levels = data.levels[chosen, : int(data.clip_words[clip])].astype(np.int64)
        result.append(
            LabelledClip(
                key=data.clip_keys[clip],
                annotators=[data.annotator_keys[i] for i in data.annotator[chosen]],
                levels=levels,
                labels=word_labels(levels),
            )
        )
    return result
