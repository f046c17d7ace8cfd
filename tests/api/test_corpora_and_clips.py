"""Corpora, and clips with their words, filtered by corpus and language."""

import pytest

from annotation.models import Word
from tests.annotation.factories import ClipFactory, CorpusFactory, SpeakerFactory
from tests.api.callers import staff_with, token_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return token_client(staff_with("annotation.view_corpus", "annotation.view_clip"))


def test_corpora_count_their_clips(api):
    corpus = CorpusFactory(name="voices")
    ClipFactory.create_batch(2, corpus=corpus)

    rows = api.get("/api/v1/corpora/").json()["results"]

    assert [(row["name"], row["clips"]) for row in rows] == [("voices", 2)]


def test_a_clip_comes_with_its_words_in_order(api):
    clip = ClipFactory(transcript="she never said that", speaker=None)
    Word.objects.filter(clip=clip, index=1).update(start=0.25, end=0.5)

    body = api.get(f"/api/v1/clips/{clip.pk}/").json()

    assert body["clip_id"] == clip.external_id and body["speaker"] is None
    assert [word["text"] for word in body["words"]] == ["she", "never", "said", "that"]
    assert body["words"][1] == {"index": 1, "text": "never", "start": 0.25, "end": 0.5}


def test_clips_filter_by_corpus_and_language(api):
    corpus = CorpusFactory()
    wanted = ClipFactory(corpus=corpus, language="de", speaker=SpeakerFactory(corpus=corpus, name="anna"))
    ClipFactory(corpus=corpus, language="en")
    ClipFactory(language="de")

    rows = api.get("/api/v1/clips/", {"corpus": corpus.pk, "language": "de"}).json()["results"]

    assert [(row["id"], row["speaker"]) for row in rows] == [(wanted.pk, "anna")]


def test_an_unknown_corpus_is_a_field_error(api):
    response = api.get("/api/v1/clips/", {"corpus": 999999})

    assert response.status_code == 400
    assert list(response.json()) == ["corpus"]
