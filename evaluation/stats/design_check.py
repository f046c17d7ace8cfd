"""What a pilot itself says about the designs the study designer simulates. Pure numpy and scipy.

The designer (evaluation.stats.study_designer) simulates a crowd of honest listeners and spammers
fitted to the pilot. A crowd that is not of that kind (listeners who all mark the first content
word of a clip, say: their marks pile up on the same words, where the designer's spammers scatter
theirs) can fit its moments and still flip labels at another rate. Two things keep its figures
honest:

- `measured_flips`: the share of words whose label one more listener flips, measured on the
  pilot itself at the numbers of listeners it has (n = k - 1 and k - 2 of its k a clip, every
  order of a clip's listeners counted exactly: the first n + 1 of a random order are a
  hypergeometric draw). The designer predicts the same figure from its simulated crowd and says
  it cannot tell when the two are more than 25 % apart beyond their noise
  (study_designer.FIT_TOLERANCE).
- `pilot_resamples`: the pilot's own uncertainty. Its clips and its listeners are resampled (a
  bootstrap of words and of people, as the study draws both) and the assumptions estimated again;
  the designer simulates its replicates under these draws, so that its flip shares carry what the
  pilot does not know.
- `measured_kappa`, `pilot_kappas`: the pilot's own standard error of kappa at each number of
  listeners it has, by a jackknife over its clips and its listeners (a listener hears a task of
  clips: which listeners a study draws is most of kappa's error in some crowds, and clustering by
  clip alone missed it), which the designer's kappa widths are checked against and scaled to.
"""

import numpy as np
from scipy.stats import hypergeom

from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.kappa_jackknife import two_way_jackknife_se
from evaluation.stats.pilot_assumptions import assumptions_from_pilot
from evaluation.stats.study_designer import (
    DesignAssumptions,
    MeasuredFlips,
    MeasuredKappa,
)

MIN_CLIPS = 20  # fewer clips with n + 1 annotations than this measure nothing


def measured_flips(clip: np.ndarray, levels: np.ndarray, n: int) -> MeasuredFlips | None:
    """The share of words (of clips with at least n + 1 annotations) whose majority label over the
    first n listeners differs from that over the first n + 1, averaged exactly over every order of
    each clip's listeners; its standard error from the clips (a clip's words share listeners).
    None with fewer than MIN_CLIPS such clips."""
    clip = np.asarray(clip, dtype=np.int64)
    levels = np.asarray(levels)
    row, word = np.nonzero(levels >= 0)
    keys = clip[row] * levels.shape[1] + word
    unique, word_of = np.unique(keys, return_inverse=True)
    marks = np.bincount(word_of, levels[row, word] >= 1)
    total = np.bincount(word_of)
    used = total >= n + 1
    word_clip = unique // levels.shape[1]
    if np.unique(word_clip[used]).size < MIN_CLIPS:
        return None
    chance = _flip_chance(marks[used].astype(np.int64), total[used], n)
    per_clip_sum = np.bincount(np.unique(word_clip[used], return_inverse=True)[1], chance)
    per_clip_words = np.bincount(np.unique(word_clip[used], return_inverse=True)[1])
    share = float(chance.mean())
    # Ratio estimator's standard error over clips.
    residual = per_clip_sum - share * per_clip_words
    clips = per_clip_sum.size
    se = float(np.sqrt(clips / (clips - 1) * np.sum(residual**2)) / per_clip_words.sum())
    return MeasuredFlips(n=n, share=share, se=se, clips=int(clips))


def _flip_chance(marks: np.ndarray, total: np.ndarray, n: int) -> np.ndarray:
    """Per word with `marks` of `total` annotations: the chance, over a random order, that the
    first n listeners' majority differs from the first n + 1's. j of the first n + 1 mark it
    (hypergeometric); the (n + 1)-th is one of the markers with chance j / (n + 1)."""
    chance = np.zeros(marks.size)
    for j in range(n + 2):
        p_j = hypergeom.pmf(j, total, marks, n + 1)
        last_marks = j / (n + 1)
        after = 2 * j > n + 1
        chance += p_j * (last_marks * ((2 * (j - 1) > n) != after) + (1 - last_marks) * ((2 * j > n) != after))
    return chance


def measured_kappa(
    clip: np.ndarray, levels: np.ndarray, *, annotator: np.ndarray | None = None, n: int | None = None
) -> MeasuredKappa | None:
    """The standard error of Fleiss' kappa of the binary marks of the first n annotations of every
    clip with n or more (n: by default the median annotations a clip, k); None with fewer than
    MIN_CLIPS such clips or no kappa.

    Without `annotator`: its words clustered by clip (what the agreement report gives), which
    takes every clip's listeners as drawn afresh. With it (the annotator of every annotation): the
    two-way jackknife over clips and listeners (evaluation.stats.kappa_jackknife), as a study draws
    both: a listener who hears a task of clips moves all of them together, which is most of kappa's
    error in a crowd with a few listeners who mark everything or nothing."""
    clip = np.asarray(clip, dtype=np.int64)
    levels = np.asarray(levels)
    if clip.size == 0:
        return None
    per_clip = np.bincount(clip)
    k = int(np.median(per_clip[np.unique(clip)])) if n is None else int(n)
    order = np.argsort(clip, kind="stable")
    rank = np.empty(clip.size, dtype=np.int64)
    rank[order] = np.arange(clip.size) - np.searchsorted(clip[order], clip[order])
    kept = (per_clip[clip] >= k) & (rank < k)
    clips = np.unique(clip[kept])
    if k < 2 or clips.size < MIN_CLIPS:
        return None
    marks = np.zeros((int(clip.max()) + 1, levels.shape[1]), dtype=np.int64)
    np.add.at(marks, clip[kept], levels[kept] >= 1)
    heard = np.zeros_like(marks)
    np.add.at(heard, clip[kept], levels[kept] >= 0)
    if annotator is not None:
        # Only the words all k heard, as below: the others left out of every annotation.
        full = (heard == k)[clip[kept]]
        se = two_way_jackknife_se(
            clip[kept], np.asarray(annotator, dtype=np.int64)[kept], np.where(full, levels[kept], -1)
        )
        return None if se is None else MeasuredKappa(n=k, se=se, clips=int(clips.size), listeners=True)
    marks, heard = marks[clips], heard[clips]
    words = heard == k
    counts = np.stack([(heard - marks)[words], marks[words]], axis=1)
    result = fleiss_kappa(counts, np.broadcast_to(clips[:, None], words.shape)[words])
    if result.value is None or result.se is None:
        return None
    return MeasuredKappa(n=k, se=float(result.se), clips=int(clips.size))


def pilot_kappas(clip: np.ndarray, annotator: np.ndarray, levels: np.ndarray) -> tuple[MeasuredKappa, ...]:
    """measured_kappa, over clips and listeners, at every n from 2 to the pilot's k (the
    median annotations a clip) that enough clips allow: the designer calibrates the widths of its
    designs of n listeners to the pilot's own at n, and says from how far its model has to
    extrapolate beyond k."""
    clip = np.asarray(clip, dtype=np.int64)
    if clip.size == 0:
        return ()
    k = int(np.median(np.bincount(clip)[np.unique(clip)]))
    found = (measured_kappa(clip, levels, annotator=annotator, n=n) for n in range(2, k + 1))
    return tuple(figure for figure in found if figure is not None)


def pilot_measurements(clip: np.ndarray, levels: np.ndarray) -> tuple[MeasuredFlips, ...]:
    """measured_flips at n = k - 1 and k - 2 (k: the median annotations a clip), those of 2 or more
    listeners that enough clips allow: one odd and one even n (ties break differently)."""
    clip = np.asarray(clip, dtype=np.int64)
    if clip.size == 0:
        return ()
    k = int(np.median(np.bincount(clip)[np.unique(clip)]))
    found = (measured_flips(clip, levels, n) for n in (k - 1, k - 2) if n >= 2)
    return tuple(figure for figure in found if figure is not None)


def pilot_resamples(
    *, clip: np.ndarray, annotator: np.ndarray, levels: np.ndarray, clips: int, draws: int, seed: int = 0, **kwargs
) -> tuple[DesignAssumptions, ...]:
    """`draws` assumptions, each estimated (assumptions_from_pilot, with `clips` and `kwargs`) from a
    bootstrap of the pilot: its clips and its listeners each drawn with replacement, as weights (a
    listener drawn twice counts twice in the crowd's make-up, without hearing a clip twice, which
    would make them agree with themselves)."""
    clip, annotator = np.asarray(clip, dtype=np.int64), np.asarray(annotator, dtype=np.int64)
    clip_ids, people = np.unique(clip), np.unique(annotator)
    rng = np.random.default_rng(seed)
    resampled = []
    for _ in range(draws):
        clip_weight = np.zeros(int(clip.max()) + 1)
        clip_weight[clip_ids] = rng.multinomial(clip_ids.size, np.full(clip_ids.size, 1 / clip_ids.size))
        person_weight = np.zeros(int(annotator.max()) + 1)
        person_weight[people] = rng.multinomial(people.size, np.full(people.size, 1 / people.size))
        try:
            resampled.append(
                assumptions_from_pilot(
                    clip=clip,
                    annotator=annotator,
                    levels=levels,
                    clips=clips,
                    clip_weight=clip_weight,
                    person_weight=person_weight,
                    **kwargs,
                )
            )
        except ValueError:
            continue  # a draw that leaves too little to estimate from
    return tuple(resampled)
