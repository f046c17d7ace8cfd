"""Synthetic emphasis studies shaped like MMEE, for the benchmark and tests. Pure numpy.

Each word has a latent prominence: normal noise plus a boost on one to three words a clip (what
the script asked to be emphasized). An annotator sees prominence plus their own noise, scaled by
the language (Mandarin noisier, as in MMEE), and marks the word at level 1 above their personal
threshold and at level 2 1.2 units higher. Clips last 2 to 8 s. Clips are handed out in tasks of 20 within a language, so
annotators share clips as on Prolific; a share of clips gets one or two extra annotations (reruns).
"""

import numpy as np

from evaluation.stats.study_data import StudyData

VARIETIES = ("de", "en1", "en2", "es-LATAM", "es-SP", "fr", "it", "pt-BR", "pt-PT", "zh")
NOISE = {
    "zh": 1.45,
    "de": 1.0,
    "en1": 0.95,
    "en2": 1.0,
    "es-LATAM": 1.05,
    "es-SP": 1.0,
    "fr": 1.05,
    "it": 1.0,
    "pt-BR": 0.9,
    "pt-PT": 1.0,
}


def simulated_study(
    *,
    clips: int = 10_000,
    per_clip: int = 10,
    words: int = 15,
    emotions: int = 34,
    extra_share: float = 0.03,
    clips_per_task: int = 20,
    seed: int = 0,
    study: str = "simulated",
) -> StudyData:
    rng = np.random.default_rng(seed)
    variety = np.arange(clips) * len(VARIETIES) // clips  # equal blocks of clips per variety
    emotion = rng.integers(0, emotions, size=clips)
    prominence = rng.normal(0.0, 1.0, size=(clips, words))
    chosen = rng.integers(1, 4, size=clips)
    ranks = rng.random((clips, words)).argsort(axis=1).argsort(axis=1)
    prominence += np.where(ranks < chosen[:, None], 2.6, 0.0)
    extra = np.where(rng.random(clips) < extra_share, rng.integers(1, 3, size=clips), 0)
    counts = per_clip + extra
    slots_clip, slots_annotator = _assign(variety, counts, clips_per_task, rng)
    annotators = int(slots_annotator.max()) + 1
    threshold = rng.normal(1.55, 0.3, size=annotators)
    sharpness = rng.uniform(0.8, 1.1, size=annotators)
    noise_scale = np.array([NOISE[VARIETIES[v]] for v in variety])
    seen = (
        prominence[slots_clip]
        + rng.normal(0, 1, size=(slots_clip.size, words))
        * (sharpness[slots_annotator] * noise_scale[slots_clip])[:, None]
    )
    levels = (seen >= threshold[slots_annotator][:, None]).astype(np.int8)
    levels += seen >= (threshold[slots_annotator] + 1.2)[:, None]
    order = np.lexsort((slots_annotator, slots_clip))
    clip_keys = tuple(f"clip-{i:06d}" for i in range(clips))
    language = tuple(VARIETIES[v].split("-")[0].rstrip("12") for v in variety)
    return StudyData.from_arrays(
        study=study,
        clip_keys=clip_keys,
        clip_groups={
            "language": language,
            "variety": tuple(VARIETIES[v] for v in variety),
            "emotion": tuple(f"emotion-{e:02d}" for e in emotion),
        },
        clip_words=np.full(clips, words, dtype=np.int64),
        annotator_keys=tuple(f"annotator-{i:06d}" for i in range(annotators)),
        clip=slots_clip[order],
        annotator=slots_annotator[order],
        levels=levels[order],
        mismatch=(rng.random(slots_clip.size) < 0.004)[order],
        seconds=rng.lognormal(2.4, 0.5, size=slots_clip.size)[order],
        check_annotator=np.arange(annotators),
        check_passed=rng.random(annotators) < 0.95,
        check_seconds=rng.lognormal(2.4, 0.5, size=annotators),
        clip_durations=rng.uniform(2.0, 8.0, size=clips),  # drawn last: the rest is as before durations
        check_durations=rng.uniform(2.0, 8.0, size=annotators),
        **_simulated_words(clips, words, seed),
    )


def _simulated_words(clips: int, words: int, seed: int, vocabulary: int = 2000) -> dict:
    """Word texts drawn from a Zipf-like vocabulary (frequency 1 / rank), with a generator of their
    own so that every other draw of the study is as it was before texts were added."""
    rng = np.random.default_rng([seed, 1])
    weights = 1.0 / np.arange(1, vocabulary + 1)
    codes = rng.choice(vocabulary, size=(clips, words), p=weights / weights.sum()).astype(np.int32)
    return {"vocabulary": tuple(f"word{i:04d}" for i in range(vocabulary)), "word_codes": codes}


def _assign(variety: np.ndarray, counts: np.ndarray, per_task: int, rng: np.random.Generator):
    """Slots (clip, annotator): within a variety, rounds of shuffled clips cut into tasks of `per_task`.

    Round r covers the clips that need an r-th annotation; an annotator takes one task, so never
    the same clip twice.
    """
    clip_of, annotator_of, next_annotator = [], [], 0
    for v in np.unique(variety):
        members = np.flatnonzero(variety == v)
        for round_ in range(int(counts[members].max())):
            needing = members[counts[members] > round_]
            needing = needing[rng.permutation(needing.size)]
            tasks = np.arange(needing.size) // per_task
            clip_of.append(needing)
            annotator_of.append(next_annotator + tasks)
            next_annotator += int(tasks.max()) + 1 if tasks.size else 0
    return np.concatenate(clip_of), np.concatenate(annotator_of)


def simulated_crowd(
    *,
    word_counts: list[int],
    intended: list[list[int]],
    most_marked: list[int],
    per_clip: int,
    clips_per_task: int,
    seed: int = 0,
) -> list[tuple[int, int, list[int]]]:
    """A crowd for given clips, in the model of `simulated_study`: each word's prominence is normal
    noise plus the same boost on the clip's `intended` words (indices), and each annotator marks
    what they hear above their own threshold, keeping to a study's limits as its page makes them:
    at least one word, at most `most_marked` (the most prominent they heard). Clips are handed out
    in tasks of `clips_per_task`, one task an annotator, `per_clip` annotations a clip. Rows
    (annotator, clip index, levels), by annotator then position in their task."""
    rng = np.random.default_rng(seed)
    clips = len(word_counts)
    slots_clip, slots_annotator = _assign(
        np.zeros(clips, dtype=np.int64), np.full(clips, per_clip), clips_per_task, rng
    )
    annotators = int(slots_annotator.max()) + 1 if slots_annotator.size else 0
    threshold = rng.normal(1.55, 0.3, size=annotators)
    sharpness = rng.uniform(0.8, 1.1, size=annotators)
    prominence = [rng.normal(0.0, 1.0, size=count) for count in word_counts]
    for clip, words in enumerate(intended):
        prominence[clip][[w for w in words if 0 <= w < word_counts[clip]]] += 2.6
    rows = []
    for clip, annotator in sorted(zip(slots_clip.tolist(), slots_annotator.tolist(), strict=True), key=lambda s: s[1]):
        seen = prominence[clip] + rng.normal(0, 1, size=word_counts[clip]) * sharpness[annotator]
        levels = (seen >= threshold[annotator]).astype(int) + (seen >= threshold[annotator] + 1.2)
        levels[np.argsort(-seen)[max(1, most_marked[clip]) :]] = 0
        levels[np.argmax(seen)] = max(1, levels[np.argmax(seen)])
        rows.append((annotator, clip, levels.tolist()))
    return rows
