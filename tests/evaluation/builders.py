"""Studies with given annotations in the database, for the selector, report, page and command tests."""

import random

import numpy as np

from annotation.models import StudyItem
from tests.annotation.factories import (
    AnnotationFactory,
    AttentionCheckFactory,
    ClipFactory,
    ParticipantFactory,
    StudyFactory,
    StudyItemFactory,
    TaskFactory,
    TaskItemFactory,
)

LANGUAGES = ("de", "en", "zh")
EMOTIONS = ("angry", "calm", "happy")


def annotated_study(*, annotations, clips, checks=(), shuffle_seed=None, **study_fields):
    """clips: {key: (words, language, variety, emotion)}; annotations: [(clip key, prolific id, levels,
    mismatch, seconds)]; checks: [(prolific id, passed)]. Rows are created in the order given, or
    shuffled with `shuffle_seed`, so tests can vary what order the database holds them in."""
    study = StudyFactory(**{"slug": "golden", "name": "golden", **study_fields})
    clip_objects = {}
    for key, (words, language, variety, emotion) in clips.items():
        clip = ClipFactory(
            corpus=study.corpus,
            external_id=key,
            transcript=" ".join(f"w{i}" for i in range(words)),
            language=language,
            variety=variety,
            emotion=emotion,
        )
        StudyItemFactory(study=study, clip=clip)
        clip_objects[key] = clip
    participants, tasks = {}, {}
    rows = list(annotations)
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(rows)
    people = sorted({row[1] for row in rows} | {pid for pid, _ in checks})
    if shuffle_seed is not None:
        random.Random(shuffle_seed + 1).shuffle(people)
    for pid in people:
        participants[pid] = ParticipantFactory(study=study, prolific_pid=pid)
        tasks[pid] = TaskFactory(participant=participants[pid])
    for key, pid, levels, mismatch, seconds in rows:
        AnnotationFactory(
            item=TaskItemFactory(task=tasks[pid], clip=clip_objects[key]),
            levels=list(levels),
            mismatch_reported=mismatch,
            seconds_spent=seconds,
        )
    for pid, passed in checks:
        check = AttentionCheckFactory(study=study, expected={"0": 2})
        levels = [2, 0, 0, 0, 0, 0] if passed else [0, 0, 0, 0, 0, 0]
        AnnotationFactory(
            item=TaskItemFactory(task=tasks[pid], clip=check.clip, attention_check=check),
            levels=levels,
            seconds_spent=7.5,
        )
    return study


def golden_rows(seed: int = 7):
    """A small, fixed study: 12 clips in 3 languages, 6 annotators, a few flags and short clips."""
    rng = np.random.default_rng(seed)
    clips = {}
    for i in range(12):
        language = LANGUAGES[i % 3]
        clips[f"clip-{i:02d}"] = (int(rng.integers(5, 9)), language, f"{language}-{i % 2}", EMOTIONS[(i // 2) % 3])
    pids = [f"{i:024x}" for i in range(1, 7)]
    annotations = []
    for key, (words, *_rest) in clips.items():
        prominence = rng.normal(size=words) + (rng.random(words) < 0.25) * 2.2
        raters = pids if key not in ("clip-03", "clip-10") else pids[:2]  # two short clips
        for p, pid in enumerate(raters):
            seen = prominence + rng.normal(0, 0.7, size=words)
            levels = (seen > 1.2).astype(int) + (seen > 2.3)
            if pid == pids[5]:
                levels = np.zeros(words, dtype=int)
                levels[p % words] = 1  # marks one arbitrary word whatever the audio
            mismatch = key == "clip-07" and p < 3
            annotations.append((key, pid, levels.tolist(), bool(mismatch), float(4 + p + words / 10)))
    checks = [(pid, pid != pids[5]) for pid in pids]
    return clips, annotations, checks


def golden_study(*, shuffle_seed=None):
    clips, annotations, checks = golden_rows()
    return annotated_study(
        clips=clips,
        annotations=annotations,
        checks=checks,
        shuffle_seed=shuffle_seed,
        target_annotations=6,
        review_min_kappa=0.1,
        review_min_attention=1.0,
        review_min_time_ratio=1.0,
    )


def exclude_clip(study, key):
    StudyItem.objects.filter(study=study, clip__external_id=key).update(review=StudyItem.Review.EXCLUDED)
