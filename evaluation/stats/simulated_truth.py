"""Simulated emphasis studies with a known truth and a chosen mixture of annotators. Pure numpy.

The words are `evaluation.stats.simulation`'s: latent prominence, normal noise plus a boost of
2.6 on the one to three words a clip that the script asked to be emphasized. The truth is that
intention: a boosted word is truly emphasized, at level 2 (heavily) where its prominence is past
the level-2 threshold of an average listener (1.55 + 1.2), else at level 1; every other word is
truly not emphasized, however prominent its noise made it. Three kinds of annotators:

- honest: the simulation's annotators (own threshold, own noise);
- spammer: marks words at random, as often as the truth does on average (10 % at level 1, 5 %
  at level 2), so that their marking rate does not give them away;
- heavy only: hears as an honest annotator does but marks only heavy emphasis (at level 2).

Clips are handed out in tasks as in the simulation (`simulation._assign`), so annotators share
clips, and an annotator's kind is drawn once for all their clips.
"""

from dataclasses import dataclass

import numpy as np

from evaluation.stats.simulation import _assign
from evaluation.stats.study_data import StudyData

LEVEL_1 = 1.55  # the mean threshold of the simulation's annotators
LEVEL_STEP = 1.2  # level 2 is this far above level 1, as in the simulation
KINDS = ("honest", "spammer", "heavy")
SPAM_RATES = (0.85, 0.10, 0.05)  # a spammer's chance of level 0, 1, 2 on any word


@dataclass(frozen=True)
class TruthStudy:
    data: StudyData
    true_levels: np.ndarray  # (clips, words) 0, 1, 2
    kind: np.ndarray  # (annotators,) index into KINDS

    @property
    def true_binary(self) -> np.ndarray:
        return self.true_levels >= 1


def simulated_truth_study(
    *,
    clips: int = 600,
    per_clip: int = 10,
    words: int = 15,
    spammers: float = 0.0,
    heavy_only: float = 0.0,
    clips_per_task: int = 20,
    seed: int = 0,
) -> TruthStudy:
    """`clips` clips of `words` words, `per_clip` annotators each; `spammers` and `heavy_only` are
    the shares of annotators of those kinds (the rest honest)."""
    if spammers < 0 or heavy_only < 0 or spammers + heavy_only > 1:
        raise ValueError(
            "the shares of spammers and heavy-only annotators must be non-negative and add up to at most 1"
        )
    rng = np.random.default_rng(seed)
    prominence = rng.normal(0.0, 1.0, size=(clips, words))
    chosen = rng.integers(1, 4, size=clips)
    ranks = rng.random((clips, words)).argsort(axis=1).argsort(axis=1)
    prominence += np.where(ranks < chosen[:, None], 2.6, 0.0)
    boosted = ranks < chosen[:, None]
    true_levels = np.where(boosted, 1 + (prominence >= LEVEL_1 + LEVEL_STEP), 0).astype(np.int8)
    slot_clip, slot_annotator = _assign(np.zeros(clips, dtype=np.int64), np.full(clips, per_clip), clips_per_task, rng)
    annotators = int(slot_annotator.max()) + 1
    kind = rng.choice(3, size=annotators, p=[1 - spammers - heavy_only, spammers, heavy_only])
    threshold = rng.normal(LEVEL_1, 0.3, size=annotators)
    sharpness = rng.uniform(0.8, 1.1, size=annotators)
    seen = prominence[slot_clip] + rng.normal(0, 1, size=(slot_clip.size, words)) * sharpness[slot_annotator, None]
    own = threshold[slot_annotator, None]
    levels = (seen >= own).astype(np.int8) + (seen >= own + LEVEL_STEP)
    slot_kind = kind[slot_annotator]
    levels[slot_kind == 2] = np.where(levels[slot_kind == 2] == 2, 2, 0)
    spam = slot_kind == 1
    levels[spam] = rng.choice(3, size=(int(spam.sum()), words), p=SPAM_RATES)
    order = np.lexsort((slot_annotator, slot_clip))
    data = StudyData.from_arrays(
        study="simulated-truth",
        clip_keys=tuple(f"clip-{i:06d}" for i in range(clips)),
        clip_groups=dict.fromkeys(("language", "variety", "emotion"), ("",) * clips),
        clip_words=np.full(clips, words, dtype=np.int64),
        annotator_keys=tuple(f"annotator-{i:06d}" for i in range(annotators)),
        clip=slot_clip[order],
        annotator=slot_annotator[order],
        levels=levels[order],
        mismatch=np.zeros(slot_clip.size, dtype=bool),
        seconds=np.full(slot_clip.size, 20.0),
        check_annotator=np.zeros(0, dtype=np.int64),
        check_passed=np.zeros(0, dtype=bool),
        check_seconds=np.zeros(0),
        clip_durations=rng.uniform(2.0, 8.0, size=clips),
    )
    return TruthStudy(data=data, true_levels=true_levels, kind=kind)
