import pytest
from django.urls import reverse

from annotation.models import Corpus, Study
from annotation.services.studies import (
    default_prerequisites,
    interface_language_for,
    language_name,
    studies_create_per_language,
)
from tests.annotation.factories import ClipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus():
    corpus = Corpus.objects.create(name="MMEE")
    for language, variety in [("en", "en-US"), ("en", "en-IN"), ("pt", "pt-BR"), ("pt", "pt-PT"), ("zh", "zh-CN")]:
        ClipFactory.create_batch(2, corpus=corpus, language=language, variety=variety)
    return corpus


def test_one_study_per_language_each_with_its_own_prerequisites_and_code(corpus):
    studies = studies_create_per_language(corpus=corpus)

    assert [(s.language, s.interface_language, s.items.count()) for s in studies] == [
        ("en", "en", 4),
        ("pt", "pt", 4),
        ("zh", "zh-hans", 2),
    ]
    assert len({s.completion_code for s in studies}) == 3
    # Written in the study's interface language, Portuguese here.
    assert studies[1].prerequisites.first().text == "O português é a sua língua materna e fala-o fluentemente?"
    assert studies[0].prerequisites.first().text.startswith("Is English your first language")
    assert all(s.status == Study.Status.DRAFT for s in studies)


def test_one_study_per_variety(corpus):
    studies = studies_create_per_language(corpus=corpus, by="variety")

    assert [s.language for s in studies] == ["en-IN", "en-US", "pt-BR", "pt-PT", "zh-CN"]
    assert "português (pt-BR)" in studies[2].prerequisites.first().text
    assert studies[2].interface_language == "pt"


def test_language_names_and_interface_languages():
    assert language_name("de") == "German" and language_name("xx-YY") == "xx-YY"
    assert interface_language_for("zh-TW") == "zh-hans" and interface_language_for("sw") == "en"


def test_admin_action_creates_them(admin_client, corpus):
    response = admin_client.post(
        reverse("admin:annotation_corpus_changelist"),
        {"action": "studies_per_language", "_selected_action": [corpus.pk]},
        follow=True,
    )

    assert "MMEE: created MMEE – en, MMEE – pt, MMEE – zh." in response.content.decode()
    assert Study.objects.count() == 3


@pytest.mark.parametrize("interface", ["en", "de", "es", "fr", "it", "pt", "zh-hans", "ar"])
@pytest.mark.parametrize("code", ["zh", "cmn", "zh-CN"])
def test_chinese_has_a_name_in_every_interface_language(interface, code):
    from django.utils import translation

    with translation.override(interface):
        name = language_name(code)
        question = default_prerequisites(code, interface)[0]["text"]

    assert not name.startswith(code) and name in question
    assert not question.startswith(code)
