"""Crowds built independently of the project's annotator models, to validate them. Pure numpy.

The annotator models (evaluation.stats.annotator_models), model allocation and the study designer
were first checked on crowds that follow the ordinal model itself. The crowds here break its
assumptions on purpose: listeners whose behaviour is not a noisy threshold at all, and clips whose
difficulty varies (the ordinal model gives a listener one noise for every clip).

Words. A clip has `words` words; about 60 % are content words, and the script asks for one to three
of them to be emphasized (the truth: a word is truly emphasized when the script asked for it,
heavily, level 2, where its prominence is past 1.55 + 1.2, else level 1). A word's prominence is
normal (0, 0.8) plus 2.6 where it is emphasized. Each clip has a difficulty: every honest
listener's noise on it is multiplied by exp(N(0, `Mixture.difficulty`)).

Behaviours (a listener's is drawn once, for all their clips, by the mixture's shares):

- honest: hears prominence + N(0, 1) x their own sharpness (0.7 to 1.3) x the clip's difficulty,
  marks level 1 above their own threshold (N(1.55, 0.4)) and level 2 a step of their own (0.9 to
  1.5) higher;
- spammer: every word at a level drawn uniformly from 0, 1, 2;
- lazy_first: marks only the first content word of every clip, at level 1;
- lazy_position: marks only the word at their own fixed position (0, 1 or 2) of every clip;
- heavy: marks every word at level 2;
- silent: marks nothing;
- confused: no threshold at all: gives the true level with probability 0.65, else one of the two
  others at random (the Dawid-Skene crowd of issue 31's first example).

Listeners hear clips in tasks, as on Prolific: round r (the r-th listener of every clip) shuffles
the clips and cuts them into tasks of `clips_per_task`, one new listener a task. A design with k
listeners a clip takes the first k rounds, so that designs of different k share their listeners.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from evaluation.stats.study_data import StudyData

BEHAVIOURS = ("honest", "spammer", "lazy_first", "lazy_position", "heavy", "silent", "confused")
LEVEL_1, LEVEL_STEP, BOOST, SPREAD = 1.55, 1.2, 2.6, 0.8
CONTENT_SHARE = 0.6
CONFUSED_ACCURACY = 0.65
DEFAULT_DIFFICULTY = 0.35


@dataclass(frozen=True)
class Mixture:
    """A crowd's recipe: the share of listeners of each behaviour (the rest honest) and the spread
    of the clips' difficulty (0: every clip alike)."""

    name: str
    shares: Mapping[str, float] = field(default_factory=dict)
    difficulty: float = DEFAULT_DIFFICULTY

    def __post_init__(self):
        unknown = set(self.shares) - set(BEHAVIOURS)
        if unknown:
            raise ValueError(f"unknown behaviours {sorted(unknown)}; choose among {', '.join(BEHAVIOURS)}")
        if any(share < 0 for share in self.shares.values()) or sum(self.shares.values()) > 1 + 1e-9:
            raise ValueError("a mixture's shares must be non-negative and add up to at most 1")
        if self.difficulty < 0:
            raise ValueError("a mixture's difficulty spread cannot be negative")

    def probabilities(self) -> np.ndarray:
        """(len(BEHAVIOURS),) the chance that a listener has each behaviour; honest takes the rest."""
        chances = np.array([self.shares.get(name, 0.0) for name in BEHAVIOURS], dtype=np.float64)
        chances[0] = 0.0
        chances[0] = max(0.0, 1.0 - chances.sum())
        return chances / chances.sum()


# The harness's mixtures (bench/annotator_models.py, tests/evaluation/test_crowds_harness.py).
MIXTURES = {
    mixture.name: mixture
    for mixture in (
        Mixture("honest", {}),
        Mixture("honest, even clips", {}, difficulty=0.0),
        Mixture("20 % spammers", {"spammer": 0.2}),
        Mixture("30 % lazy first", {"lazy_first": 0.3}),
        Mixture("30 % lazy position", {"lazy_position": 0.3}),
        Mixture("20 % heavy", {"heavy": 0.2}),
        Mixture("20 % silent", {"silent": 0.2}),
        Mixture("issue: lazy + heavy", {"lazy_first": 0.3, "heavy": 0.1}),
        Mixture("confused + 20 % spammers", {"confused": 0.8, "spammer": 0.2}),
        Mixture(
            "all",
            {
                "spammer": 0.1,
                "lazy_first": 0.1,
                "lazy_position": 0.1,
                "heavy": 0.1,
                "silent": 0.1,
                "confused": 0.1,
            },
        ),
    )
}


@dataclass(frozen=True)
class Crowd:
    """A simulated study with its truth. Listener slots are in hearing order: a design with k
    listeners a clip uses slots 0 to k - 1."""

    mixture: Mixture
    levels: np.ndarray  # (clips, slots, words) int8: 0, 1, 2
    listener: np.ndarray  # (clips, slots) the listener in each slot
    behaviour: np.ndarray  # (listeners,) index into BEHAVIOURS
    true_levels: np.ndarray  # (clips, words) int8: 0, 1, 2
    content: np.ndarray  # (clips, words) bool
    difficulty: np.ndarray  # (clips,) the honest listeners' noise multiplier

    @property
    def truth(self) -> np.ndarray:
        """(clips, words) bool: truly emphasized."""
        return self.true_levels >= 1

    @property
    def listeners(self) -> int:
        return int(self.behaviour.size)

    def annotations(self, per_clip: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The first `per_clip` listeners of every clip as StudyData's arrays (clip, annotator,
        levels), by clip then slot; annotator indices are the crowd's (n_annotators = listeners)."""
        _check_per_clip(per_clip, self.levels.shape[1])
        clips, words = self.true_levels.shape
        clip = np.repeat(np.arange(clips), per_clip)
        return clip, self.listener[:, :per_clip].ravel(), self.levels[:, :per_clip].reshape(-1, words)

    def majority(self, per_clip: int) -> np.ndarray:
        """(clips, words) bool: the published rule, more than half of the first `per_clip` mark it."""
        _check_per_clip(per_clip, self.levels.shape[1])
        return 2 * (self.levels[:, :per_clip] >= 1).sum(axis=1) > per_clip

    def study_data(self, per_clip: int) -> StudyData:
        """The first `per_clip` listeners of every clip as a StudyData (for reports and the designer)."""
        clip, annotator, levels = self.annotations(per_clip)
        clips, words = self.true_levels.shape
        used = np.unique(annotator)
        order = np.lexsort((annotator, clip))
        return StudyData.from_arrays(
            study=f"crowd: {self.mixture.name}",
            clip_keys=tuple(f"clip-{i:06d}" for i in range(clips)),
            clip_groups=dict.fromkeys(("language", "variety", "emotion"), ("",) * clips),
            clip_words=np.full(clips, words, dtype=np.int64),
            annotator_keys=tuple(f"listener-{i:06d}" for i in used),
            clip=clip[order],
            annotator=np.searchsorted(used, annotator[order]),
            levels=levels[order],
            mismatch=np.zeros(clip.size, dtype=bool),
            seconds=np.full(clip.size, 20.0),
            check_annotator=np.zeros(0, dtype=np.int64),
            check_passed=np.zeros(0, dtype=bool),
            check_seconds=np.zeros(0),
            clip_durations=np.full(clips, 5.0),
        )


def crowd(
    mixture: Mixture | str,
    *,
    clips: int,
    listeners: int = 15,
    words: int = 15,
    clips_per_task: int = 20,
    seed: int = 0,
) -> Crowd:
    """A crowd of `mixture` (a Mixture or the name of one of MIXTURES): `clips` clips of `words`
    words, `listeners` slots a clip; the same seed gives the same crowd."""
    if isinstance(mixture, str):
        if mixture not in MIXTURES:
            raise ValueError(f"unknown mixture {mixture!r}; choose one of {', '.join(MIXTURES)}")
        mixture = MIXTURES[mixture]
    if clips < 1 or words < 1 or listeners < 1 or clips_per_task < 1:
        raise ValueError("clips, listeners, words and clips_per_task must be at least 1")
    rng = np.random.default_rng(seed)
    content, true_levels, prominence = _words(clips, words, rng)
    difficulty = np.exp(rng.normal(0.0, mixture.difficulty, size=clips))
    listener = _slots(clips, listeners, clips_per_task, rng)
    count = int(listener.max()) + 1
    behaviour = rng.choice(len(BEHAVIOURS), size=count, p=mixture.probabilities())
    levels = _honest(prominence, difficulty, listener, count, rng)
    kind = behaviour[listener]  # (clips, slots)
    _apply(levels, kind, "spammer", lambda n: rng.integers(0, 3, size=(n, words)))
    first = np.argmax(content, axis=1)  # a clip with no content word: its first word
    _apply(levels, kind, "lazy_first", lambda n: _only(np.nonzero(kind == _index("lazy_first"))[0], first, words))
    position = np.minimum(rng.integers(0, 3, size=count), words - 1)[listener]
    _apply(levels, kind, "lazy_position", lambda n: _only(None, position[kind == _index("lazy_position")], words))
    _apply(levels, kind, "heavy", lambda n: np.full((n, words), 2))
    _apply(levels, kind, "silent", lambda n: np.zeros((n, words)))
    _apply(levels, kind, "confused", lambda n: _confused(true_levels[np.nonzero(kind == _index("confused"))[0]], rng))
    return Crowd(mixture, levels, listener, behaviour, true_levels, content, difficulty)


def _check_per_clip(per_clip: int, slots: int) -> None:
    if not 1 <= per_clip <= slots:
        raise ValueError(f"listeners a clip must be between 1 and the crowd's {slots}")


def _index(name: str) -> int:
    return BEHAVIOURS.index(name)


def _words(clips: int, words: int, rng: np.random.Generator):
    """Content words, the true levels and the prominence of every word."""
    content = rng.random((clips, words)) < CONTENT_SHARE
    chosen = rng.integers(1, 4, size=clips)
    # The script stresses content words: rank them first (in random order), then the others.
    ranks = (rng.random((clips, words)) + ~content).argsort(axis=1).argsort(axis=1)
    emphasized = ranks < chosen[:, None]
    prominence = rng.normal(0.0, SPREAD, size=(clips, words)) + BOOST * emphasized
    true_levels = np.where(emphasized, 1 + (prominence >= LEVEL_1 + LEVEL_STEP), 0).astype(np.int8)
    return content, true_levels, prominence


def _slots(clips: int, slots: int, per_task: int, rng: np.random.Generator) -> np.ndarray:
    """(clips, slots) listener of each slot: each round shuffles the clips into new tasks."""
    listener = np.empty((clips, slots), dtype=np.int64)
    tasks = -(-clips // per_task)
    for round_ in range(slots):
        order = rng.permutation(clips)
        listener[order, round_] = round_ * tasks + np.arange(clips) // per_task
    return listener


def _honest(prominence, difficulty, listener, count, rng) -> np.ndarray:
    threshold = rng.normal(LEVEL_1, 0.4, size=count)[listener][..., None]
    step = rng.uniform(0.9, 1.5, size=count)[listener][..., None]
    sharpness = rng.uniform(0.7, 1.3, size=count)[listener][..., None]
    noise = rng.normal(size=(*listener.shape, prominence.shape[1])) * sharpness * difficulty[:, None, None]
    heard = prominence[:, None, :] + noise
    return ((heard >= threshold).astype(np.int8) + (heard >= threshold + step)).astype(np.int8)


def _apply(levels, kind, name, make) -> None:
    """Replace the levels of the slots whose listener has behaviour `name` by make(slots)."""
    where = kind == _index(name)
    if where.any():
        levels[where] = np.asarray(make(int(where.sum())), dtype=np.int8)


def _only(rows, positions, words) -> np.ndarray:
    """One mark at level 1 per slot, at `positions` (indexed by `rows` when given)."""
    at = positions if rows is None else positions[rows]
    marks = np.zeros((at.size, words), dtype=np.int8)
    marks[np.arange(at.size), at] = 1
    return marks


def _confused(true_levels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The true level with probability CONFUSED_ACCURACY, else one of the other two at random."""
    wrong = rng.random(true_levels.shape) >= CONFUSED_ACCURACY
    shift = rng.integers(1, 3, size=true_levels.shape)
    return np.where(wrong, (true_levels + shift) % 3, true_levels)
