from datetime import timedelta

import factory
from django.utils import timezone

from annotation.models import (
    Annotation,
    AttentionCheck,
    Clip,
    ClipWarning,
    Corpus,
    Participant,
    Speaker,
    Study,
    StudyItem,
    Task,
    TaskItem,
    Word,
)


class CorpusFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Corpus

    name = factory.Sequence(lambda n: f"corpus-{n}")


class SpeakerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Speaker

    corpus = factory.SubFactory(CorpusFactory)
    name = factory.Sequence(lambda n: f"speaker-{n}")


class ClipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Clip
        skip_postgeneration_save = True

    corpus = factory.SubFactory(CorpusFactory)
    external_id = factory.Sequence(lambda n: f"clip-{n:04d}")
    transcript = "the cat sat on the mat"
    language = "en"
    source_path = factory.LazyAttribute(lambda clip: f"audio/{clip.external_id}.wav")
    original_audio = factory.LazyAttribute(lambda clip: f"audio/{clip.external_id}/original.wav")
    model_audio = factory.LazyAttribute(lambda clip: f"audio/{clip.external_id}/model.wav")
    browser_audio = factory.LazyAttribute(lambda clip: f"audio/{clip.external_id}/browser.mp3")
    duration = 2.0
    sample_rate = 16000
    checksum = factory.Sequence(lambda n: f"{n:064x}")

    @factory.post_generation
    def words(clip, create, extracted, **kwargs):
        if create:
            Word.objects.bulk_create(
                Word(clip=clip, index=i, text=text) for i, text in enumerate(clip.transcript.split())
            )


class ClipWarningFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ClipWarning

    clip = factory.SubFactory(ClipFactory)
    code = ClipWarning.Code.CLIPPING
    detail = "3 run(s) of 3+ samples at full scale"


# --- Studies, participants, tasks and annotations (participant review) -------


class StudyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Study

    corpus = factory.SubFactory(CorpusFactory)
    name = factory.Sequence(lambda n: f"study-{n}")
    slug = factory.Sequence(lambda n: f"study-{n}")
    consent_text = "We record which words you mark. Taking part is voluntary."


class ParticipantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Participant

    study = factory.SubFactory(StudyFactory)
    prolific_pid = factory.Sequence(lambda n: f"{n:024x}")  # Prolific ids are 24 hex digits
    prolific_study_id = factory.LazyAttribute(lambda p: f"{p.study.pk:024x}")
    prolific_session_id = factory.Sequence(lambda n: f"session{n:017d}")


class TaskFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Task

    participant = factory.SubFactory(ParticipantFactory)
    study = factory.SelfAttribute("participant.study")
    expires_at = factory.LazyFunction(lambda: timezone.now() + timedelta(hours=1))


class AttentionCheckFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AttentionCheck

    study = factory.SubFactory(StudyFactory)
    clip = factory.SubFactory(ClipFactory, corpus=factory.SelfAttribute("..study.corpus"))
    expected = {"1": 2}


class TaskItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TaskItem

    task = factory.SubFactory(TaskFactory)
    position = factory.Sequence(lambda n: n)
    clip = factory.SubFactory(ClipFactory, corpus=factory.SelfAttribute("..task.study.corpus"))
    word_count = factory.LazyAttribute(lambda item: len(item.clip.transcript.split()))
    duration = factory.SelfAttribute("clip.duration")
    status = TaskItem.Status.SUBMITTED


class AnnotationFactory(factory.django.DjangoModelFactory):
    """A submitted answer; for an attention-check item, attention_passed follows the check."""

    class Meta:
        model = Annotation

    item = factory.SubFactory(TaskItemFactory)
    participant = factory.SelfAttribute("item.task.participant")
    clip = factory.SelfAttribute("item.clip")
    levels = factory.LazyAttribute(lambda a: [1] + [0] * (a.item.word_count - 1))
    attention_passed = factory.LazyAttribute(
        lambda a: a.item.attention_check.passed_by(a.levels) if a.item.attention_check else None
    )
    coverage = 1.0
    seconds_spent = 12.0


# --- Study items (study admin, top-ups); StudyFactory is above -------------


class StudyItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = StudyItem

    study = factory.SubFactory(StudyFactory)
    clip = factory.SubFactory(ClipFactory, corpus=factory.SelfAttribute("..study.corpus"))
