import factory

from annotation.models import Clip, ClipWarning, Corpus, Speaker, Word


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
