"""Final label sets to benchmark, built in this process (no worker: the worker tests use them too).

- `tiny_label_set`: a few imported WAV clips per language with word times, annotated with the
  factories; quick, for the service, admin and API tests;
- `demo_label_set`: the demo corpus (annotation/demo_corpus, synthetic emphasis), annotated
  through the real assignment and submission services, for the end-to-end tests.
"""

import json

from django.conf import settings

from annotation.models import Corpus, Study
from annotation.services.assignment import assignment_claim
from annotation.services.corpus_import import corpus_import
from annotation.services.studies import ClipSelection, study_create
from annotation.services.submission import annotation_submit
from evaluation.models import LabelSet
from evaluation.services.label_sets import (
    label_set_build,
    label_set_create,
    label_set_default_parameters,
    label_set_finalize,
)
from tests.annotation.factories import (
    AnnotationFactory,
    ParticipantFactory,
    StudyFactory,
    StudyItemFactory,
    TaskFactory,
    TaskItemFactory,
)
from tests.annotation.study_helpers import first_pending, listened, ready_participant

DEMO = settings.BASE_DIR / "annotation" / "demo_corpus"
WORDS = ("we", "never", "said", "she", "took", "the", "money")
LISTENERS = [f"{n:024x}" for n in (0xA1, 0xB2, 0xC3)]
# More test clips than the default 80/10/10, so that the demo's test split has words enough to score.
DEMO_PROPORTIONS = (0.6, 0.15, 0.25)


def final_label_set(studies: list[Study], *, name: str, **overrides) -> LabelSet:
    """Build a set of `studies` here and now (as manage.py labelset_create does) and finalize it."""
    parameters = label_set_default_parameters(studies=studies, resamples=20, **overrides)
    label_set = label_set_create(name=name, studies=studies, parameters=parameters, enqueue=False)
    label_set_build(label_set_id=label_set.pk)
    label_set.refresh_from_db()
    assert label_set.status == LabelSet.Status.SUCCEEDED, label_set.error
    return label_set_finalize(label_set=label_set)


def tiny_label_set(corpus_folder, *, name: str = "tiny", languages=("en", "de"), per_language: int = 4) -> LabelSet:
    """`per_language` timed clips per language, split 2 / 1 / 1 for 4, marked by three participants
    (the fourth word emphasized by two of them)."""
    for language in languages:
        for index in range(per_language):
            words = WORDS[: 4 + index % 3]
            timed = [
                {"text": w, "start": round(0.1 + 0.2 * k, 3), "end": round(0.3 + 0.2 * k, 3)}
                for k, w in enumerate(words)
            ]
            corpus_folder.add(
                f"{name}-{language}-{index}",
                " ".join(words),
                seconds=1.6,
                language=language,
                speaker=f"{language}{index % 2}",
                emotion=("anger", "sadness")[index % 2],
                words=timed,
            )
    corpus_folder.write_jsonl()
    corpus_import(path=corpus_folder.root, corpus_name=name)
    corpus = Corpus.objects.get(name=name)
    study = StudyFactory(corpus=corpus, slug=name, name=name, target_annotations=3)
    clips = list(corpus.clips.order_by("external_id"))
    for clip in clips:
        StudyItemFactory(study=study, clip=clip)
    for person in range(3):
        task = TaskFactory(participant=ParticipantFactory(study=study, prolific_pid=f"{name}{person:020d}"))
        for clip in clips:
            levels = [int(k == 3 and person < 2) for k in range(clip.words.count())]
            AnnotationFactory(item=TaskItemFactory(task=task, clip=clip), levels=levels)
    return final_label_set([study], name=name, proportions=(0.5, 0.25, 0.25))


def intended_emphasis() -> dict[str, int]:
    """The word the demo corpus's generator stressed, per clip (its manifest's intended_emphasis)."""
    rows = [json.loads(line) for line in (DEMO / "manifest.jsonl").read_text().splitlines()]
    return {row["id"]: row["intended_emphasis"][0] for row in rows}


def demo_marks(listener: int, words: int, target: int) -> list[int]:
    """Listeners 0 and 1 hear the intended word (levels 2 and 1); listener 2 marks the first word."""
    levels = [0] * words
    if listener == 2:
        levels[0] = 1
    else:
        levels[target] = 2 - listener
    return levels


def demo_label_set(*, name: str = "demo benchmark") -> LabelSet:
    """All 64 demo clips (en, es, de), annotated by three listeners through the real services."""
    corpus_import(path=DEMO, corpus_name="Demo (synthetic, espeak-ng)")
    study = study_create(
        name=name,
        slug="demo-benchmark",
        corpus=Corpus.objects.get(),
        selection=ClipSelection(),
        clips_per_task=64,
        target_annotations=3,
        attention_checks_per_task=0,
        status=Study.Status.LIVE,
    )
    targets = intended_emphasis()
    for listener, pid in enumerate(LISTENERS):
        participant = ready_participant(study, prolific_pid=pid)
        task = assignment_claim(participant=participant)
        for _ in range(task.items.count()):
            item = first_pending(task)
            listened(item)
            levels = demo_marks(listener, item.word_count, targets[item.clip.external_id])
            annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=levels, mismatch=False)
    return final_label_set([study], name=name, proportions=DEMO_PROPORTIONS)
