"""The benchmark settings of MMEE (sections 4.1-4.4) as train / validation / test clip lists.

Every setting uses the set's fixed splits: training and validation clips come from `train` and
`validation`, test clips from `test`, so all detectors see the same clips.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

from modelzoo.training.data import Clip, in_split, not_of_language, of_arousal, of_language, training_subset

KINDS = ("monolingual", "cross-lingual", "multilingual", "cross-arousal", "data-scale", "cross-dataset")


@dataclass(frozen=True)
class Setting:
    """kind, and what it needs:
    - monolingual, cross-lingual: `language` (the training language; cross-lingual tests on every other);
    - multilingual: nothing (all languages; metrics per language and pooled);
    - cross-arousal: `train_arousal` and `test_arousal`, "high" or "low";
    - data-scale: `percent` (the nested training subset), optionally `language`;
    - cross-dataset: a second folder to test on (run_benchmark's `test_folder`), optionally
      `language` for training and `test_language` for testing.
    `by="variety"` reads `language` as a regional variety (e.g. pt-BR) instead."""

    kind: str
    language: str = ""
    train_arousal: str = ""
    test_arousal: str = ""
    percent: int = 100
    test_language: str = ""
    by: str = "language"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown setting {self.kind!r}; one of {', '.join(KINDS)}")
        if self.kind in ("monolingual", "cross-lingual") and not self.language:
            raise ValueError(f"the {self.kind} setting needs a training language")
        if self.kind == "cross-arousal" and {self.train_arousal, self.test_arousal} - {"high", "low"}:
            raise ValueError('the cross-arousal setting needs train_arousal and test_arousal, each "high" or "low"')

    @classmethod
    def from_dict(cls, values: dict) -> "Setting":
        unknown = sorted(set(values) - {field.name for field in fields(cls)})
        if unknown:
            raise ValueError(f"unknown setting fields: {', '.join(unknown)}")
        return cls(**values)

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def label(self) -> str:
        if self.kind == "cross-arousal":
            return f"cross-arousal {self.train_arousal} -> {self.test_arousal}"
        if self.kind == "data-scale":
            return f"data-scale {self.percent} %" + (f" ({self.language})" if self.language else "")
        return f"{self.kind} {self.language}".strip()


@dataclass(frozen=True)
class Partition:
    train: list[Clip]
    validation: list[Clip]
    test: list[Clip]

    def sizes(self) -> dict[str, int]:
        return {"train": len(self.train), "validation": len(self.validation), "test": len(self.test)}


def partition(setting: Setting, clips: Sequence[Clip], test_clips: Sequence[Clip] | None = None) -> Partition:
    """The clips a setting trains, validates and tests on. `test_clips` (another set's clips) is
    what cross-dataset tests on, and only it."""
    if (setting.kind == "cross-dataset") != (test_clips is not None):
        raise ValueError("a second set of clips to test on goes with the cross-dataset setting, and only with it")
    chosen = _choose(setting, list(clips), list(test_clips or ()))
    for name, subset in (("training", chosen.train), ("validation", chosen.validation), ("test", chosen.test)):
        if not subset:
            raise ValueError(f"{setting.label}: no {name} clips in this set")
    return chosen


def _choose(setting: Setting, clips: list[Clip], test_clips: list[Clip]) -> Partition:
    def language(subset, name=setting.language):
        return of_language(subset, name, setting.by) if name else subset

    train, validation, test = (in_split(clips, split) for split in ("train", "validation", "test"))
    if setting.kind == "monolingual":
        return Partition(language(train), language(validation), language(test))
    if setting.kind == "cross-lingual":
        return Partition(language(train), language(validation), not_of_language(test, setting.language, setting.by))
    if setting.kind == "multilingual":
        return Partition(train, validation, test)
    if setting.kind == "cross-arousal":
        return Partition(
            of_arousal(train, setting.train_arousal),
            of_arousal(validation, setting.train_arousal),
            of_arousal(test, setting.test_arousal),
        )
    if setting.kind == "data-scale":
        # the training subset shrinks; validation and test stay fixed (MMEE section 4.2)
        return Partition(language(training_subset(clips, setting.percent)), language(validation), language(test))
    # cross-dataset: train and validate on this set, test on the other set's test split
    other_test = in_split(test_clips, "test")
    return Partition(language(train), language(validation), language(other_test, setting.test_language))
