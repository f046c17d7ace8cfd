"""The study designer's assumptions estimated from a pilot, a study's own first annotations
(`assumptions_from_pilot`): the crowd evaluation.stats.study_designer simulates. Pure numpy and
scipy; split from study_designer, which simulates and scores the designs.
"""

import math

import numpy as np
from scipy.special import logit
from scipy.stats import binom

from evaluation.stats.study_designer import DesignAssumptions


def _logit_of(p):
    """logit with p kept inside (1e-9, 1 - 1e-9), as study_designer's simulation reads chances."""
    return logit(np.clip(p, 1e-9, 1 - 1e-9))


def assumptions_from_pilot(
    *,
    clip: np.ndarray,
    annotator: np.ndarray,
    levels: np.ndarray,
    clips: int,
    durations: np.ndarray | None = None,
    seconds: np.ndarray | None = None,
    source: str = "pilot",
    clip_weight: np.ndarray | None = None,
    person_weight: np.ndarray | None = None,
    **overrides,
) -> DesignAssumptions:
    """Assumptions estimated from a pilot's annotations (StudyData's arrays), by moments:

    - emphasis rate: the share of words (with two or more annotations) that the majority marks;
    - accuracy: how often an annotation agrees with the majority of the word's other annotators
      (words with three or more, ties left out), the spammers' annotations removed;
    - spammers: the share of annotations by annotators whose marks, against those majorities,
      say nothing (Youden's J below 0.2, with at least 20 words judged);
    - heterogeneity: the spread of the words' marking shares beyond what the two classes and
      binomial noise give (a beta-binomial moment estimate), between 0.02 and 0.9;
    - heavy share: the share of marks on majority-emphasized words that are at level 2;
    - clips per task: the median clips an annotator heard; listener spread: the spread of honest
      annotators' own marking rates beyond chance (_listener_spread); spammer profiles: each
      spammer's marking rate and level-2 share; word chances: the distribution of a word's chance
      of an honest mark (_word_chances);
    - durations: the pilot's clips' (unknown ones: 5 s); seconds per audio second: the median of
      an annotation's time over its clip's duration.
    `clip_weight` and `person_weight` (by clip and annotator index; 1 each when not given): how many
    times each clip and each annotator counts, for a bootstrap (design_check.pilot_resamples) that
    keeps who is a spammer as the whole pilot says and never puts a listener twice on one clip.
    `overrides` replace any of them (and give `hourly_rate`)."""
    clip, annotator = np.asarray(clip, dtype=np.int64), np.asarray(annotator, dtype=np.int64)
    levels = np.asarray(levels)
    if clip.size == 0:
        raise ValueError("the pilot has no annotations yet: give assumptions instead")
    row, word = np.nonzero(levels >= 0)
    keys = clip[row] * levels.shape[1] + word
    unique_keys, word_of = np.unique(keys, return_inverse=True)
    word_clip = unique_keys // levels.shape[1]
    mark = (levels[row, word] >= 1).astype(np.int64)
    marks, total = np.bincount(word_of, mark), np.bincount(word_of)
    others_marks, others = marks[word_of] - mark, total[word_of] - 1
    judged = (others >= 2) & (2 * others_marks != others)
    if not judged.any():
        raise ValueError("the pilot needs words with three or more annotations to estimate accuracy")
    majority = 2 * others_marks > others
    agree = mark == majority
    who = annotator[row]
    spam = _spammers(who, mark, majority, judged)
    honest = judged & ~spam[who]
    others_share = np.where(others > 0, others_marks / np.maximum(others, 1), np.nan)
    by_clip = np.ones(int(clip.max()) + 1) if clip_weight is None else np.asarray(clip_weight, dtype=np.float64)
    by_person = (
        np.ones(spam.size) if person_weight is None else np.asarray(person_weight, dtype=np.float64)[: spam.size]
    )
    word_weight = np.bincount(word_of, by_clip[clip[row]]) / total  # the word's clip's weight
    row_weight = by_clip[clip[row]] * by_person[who]
    paired = total >= 2
    emphasis_rate = _weighted_mean(2 * marks[paired] > total[paired], word_weight[paired])
    accuracy = float(
        np.clip(_weighted_mean(agree[honest], row_weight[honest]) if honest.any() else agree[judged].mean(), 0.55, 0.99)
    )
    estimated = {
        "emphasis_rate": emphasis_rate,
        "accuracy": accuracy,
        "spammers": _weighted_mean(spam[who], row_weight),
        "heterogeneity": _heterogeneity(marks, total, emphasis_rate, accuracy, word_weight),
        "heavy_share": _heavy_share(levels[row, word], word_of, marks, total, row_weight),
        "clips_per_task": _clips_per_task(clip, annotator),
        "listener_spread": _listener_spread(who[honest], mark[honest], others_share[honest], by_person),
        "spammer_profiles": _spammer_profiles(who, levels[row, word], spam, by_person),
        **_word_chances(word_of, word_clip, mark, spam[who], word_weight, by_clip),
        "words_per_clip": round(float(np.mean(np.bincount(np.unique(keys) // levels.shape[1])[np.unique(clip)]))),
        "clips": int(clips),
        **_timing(clip, durations, seconds),
        "source": source,
    }
    return DesignAssumptions(**{**estimated, **overrides})


def _spammers(who, mark, majority, judged) -> np.ndarray:
    """Per annotator: do their marks, against the other annotators' majorities, say nothing
    (Youden's J below 0.2, with at least 20 words judged)?"""
    annotators = int(who.max()) + 1
    positive, negative = judged & majority, judged & ~majority

    def count(mask, weights=None):
        return np.bincount(who[mask], weights=None if weights is None else weights[mask], minlength=annotators)

    on_positive, on_negative = count(positive), count(negative)
    judged_enough = (count(judged) >= 20) & (on_positive > 0) & (on_negative > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        youden = count(positive, mark) / on_positive - count(negative, mark) / on_negative
    return judged_enough & (youden < 0.2)


CHANCE_GRID = np.linspace(0.0, 1.0, 26)


def _word_chances(word_of, word_clip, mark, by_spammer, word_weight, clip_weight, iterations: int = 200) -> dict:
    """The joint distribution of a word's chance of a mark by an honest listener and by a spammer, by
    nonparametric maximum likelihood (EM on a grid of chance pairs, Laird 1978) from each word's
    honest marks of its honest annotations (words with two or more) and spammer marks of its
    spammer annotations: no shape is assumed, so words that one kind of listener marks all together
    (a clip's first word, say) keep their own share of chances. Points of weight below 1e-4 are
    dropped. `word_weight`: how many times each word counts.

    Besides (DesignAssumptions' pilot_clips and word_posteriors): the pilot's clips as lists of
    their words' kinds (a kind: the words with the same marks of the same annotations; each clip
    as many times as `clip_weight` says), and each kind's posterior over the points, so that the
    designer can simulate clips as the pilot's clips are, words that go together (a hard clip, a
    clip with three stresses) kept together."""
    words = word_clip.size
    honest_marks = np.bincount(word_of[~by_spammer], mark[~by_spammer], minlength=words).astype(np.int64)
    honest_total = np.bincount(word_of[~by_spammer], minlength=words)
    spam_marks = np.bincount(word_of[by_spammer], mark[by_spammer], minlength=words).astype(np.int64)
    spam_total = np.bincount(word_of[by_spammer], minlength=words)
    used = (honest_total >= 2) & (word_weight > 0)
    if used.sum() < 10:
        return {}
    observed = np.stack([honest_marks, honest_total, spam_marks, spam_total], axis=1)
    kinds, kind_of = np.unique(observed, axis=0, return_inverse=True)
    kind_of = kind_of.ravel()
    count = np.bincount(kind_of[used], word_weight[used], minlength=len(kinds))
    if spam_total.any():
        honest, spam = (grid.ravel() for grid in np.meshgrid(CHANCE_GRID, CHANCE_GRID, indexing="ij"))
    else:  # no spammer in the pilot: their chances say nothing; the honest distribution alone
        honest = spam = CHANCE_GRID
    likelihood = binom.pmf(kinds[:, :1], kinds[:, 1:2], honest[None, :])
    if spam_total.any():
        likelihood = likelihood * binom.pmf(kinds[:, 2:3], kinds[:, 3:4], spam[None, :])  # (kinds, points)
    weights = np.full(honest.size, 1 / honest.size)
    for _ in range(iterations):
        posterior = likelihood * weights
        posterior /= posterior.sum(axis=1, keepdims=True)
        weights = count @ posterior / count.sum()
    kept = weights >= 1e-4
    weights = weights[kept] / weights[kept].sum()
    posterior = likelihood[:, kept] * weights
    posterior = posterior / np.maximum(posterior.sum(axis=1, keepdims=True), 1e-300)
    # A word with fewer than two honest annotations says little of itself: it takes the distribution.
    kind_of = np.where(honest_total >= 2, kind_of, len(kinds))
    posterior = np.vstack([posterior, weights])
    clips = []
    for clip in np.unique(word_clip):
        times = round(float(clip_weight[clip]))
        clips += [tuple(int(k) for k in kind_of[word_clip == clip])] * times
    return {
        "word_chances": tuple(
            (round(float(h), 4), round(float(p), 4), float(w))
            for h, p, w in zip(honest[kept], spam[kept], weights, strict=True)
        ),
        "pilot_clips": tuple(clips),
        "word_posteriors": tuple(tuple(float(x) for x in row) for row in posterior),
    }


def _weighted_mean(values, weights) -> float:
    total = float(np.sum(weights))
    return float(np.sum(np.asarray(values, dtype=np.float64) * weights) / total) if total > 0 else 0.0


def _clips_per_task(clip, annotator) -> int:
    """The median number of clips an annotator heard: how long a listener's behaviour holds."""
    pairs = np.unique(np.stack([annotator, clip], axis=1), axis=0)
    return max(1, round(float(np.median(np.bincount(pairs[:, 0])[np.unique(pairs[:, 0])]))))


def _listener_spread(who, mark, others_share, person_weight) -> float:
    """The sd of honest annotators' own shifts (logit) of a word's marking chance: each one's
    marking rate against the others' shares on the same words, less its binomial noise (moments);
    annotators with 20 or more such words."""
    usable = np.isfinite(others_share)
    who, mark, others_share = who[usable], mark[usable], others_share[usable]
    if who.size == 0:
        return 0.0
    size = np.bincount(who)
    people = np.nonzero(size >= 20)[0]
    if people.size < 5:
        return 0.0
    n = size[people]
    rate = np.clip(np.bincount(who, mark)[people] / n, 0.5 / n, 1 - 0.5 / n)
    expected = np.clip(np.bincount(who, others_share)[people] / n, 0.5 / n, 1 - 0.5 / n)
    shift = _logit_of(rate) - _logit_of(expected)
    noise = 1 / (n * rate * (1 - rate))
    weight = person_weight[people]
    if weight.sum() < 5:
        return 0.0
    mean = _weighted_mean(shift, weight)
    variance = float(np.sum(weight * (shift - mean) ** 2) / (weight.sum() - 1))
    return float(np.clip(math.sqrt(max(0.0, variance - _weighted_mean(noise, weight))), 0.0, 5.0))


def _spammer_profiles(who, given, spam, person_weight) -> tuple[tuple[float, float], ...]:
    """(marking rate, share of marks at level 2) of each annotator judged a spammer, as many times
    as their weight."""
    profiles = []
    for person in np.repeat(np.nonzero(spam)[0], np.round(person_weight[spam]).astype(np.int64)):
        mine = given[who == person]
        marked = mine >= 1
        heavy = float((mine[marked] == 2).mean()) if marked.any() else 0.0
        profiles.append((round(float(marked.mean()), 4), round(heavy, 4)))
    return tuple(profiles)


def _heterogeneity(marks, total, emphasis_rate: float, accuracy: float, word_weight) -> float:
    """rho from the variance of the words' marking shares (beta-binomial moments): what is left of
    it after the split into two classes (emphasis rate, accuracy) is rho + (1 - rho) / k times the
    classes' binomial variance."""
    used = (total >= 2) & (word_weight > 0)
    if used.sum() < 10:
        return 0.25
    share, n, weight = marks[used] / total[used], total[used], word_weight[used]
    means = np.array([1 - accuracy, accuracy])
    weights = np.array([1 - emphasis_rate, emphasis_rate])
    between = weights @ (means - weights @ means) ** 2
    within = weights @ (means * (1 - means))
    inverse = _weighted_mean(1 / n, weight)
    variance = _weighted_mean((share - _weighted_mean(share, weight)) ** 2, weight)
    rho = ((variance - between) / within - inverse) / (1 - inverse)
    return float(np.clip(rho, 0.02, 0.9))


def _heavy_share(given, word_of, marks, total, row_weight) -> float:
    emphasized = (2 * marks > total)[word_of]
    marked = emphasized & (given >= 1) & (row_weight > 0)
    return _weighted_mean(given[marked] == 2, row_weight[marked]) if marked.any() else 0.35


def _timing(clip, durations, seconds) -> dict:
    if durations is None:
        return {}
    durations = np.asarray(durations, dtype=np.float64)
    known = np.where(np.isfinite(durations) & (durations > 0), durations, 5.0)
    timing: dict[str, tuple[float, ...] | float] = {"durations": tuple(float(d) for d in known)}
    if seconds is not None:
        per_audio = np.asarray(seconds, dtype=np.float64) / known[clip]
        per_audio = per_audio[np.isfinite(per_audio) & (per_audio > 0)]
        if per_audio.size:
            timing["seconds_per_audio_second"] = float(np.median(per_audio))
    return timing
