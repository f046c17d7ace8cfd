"""Short tasks in Mandarin (a word list, no spaces), Arabic (right to left) and
Spanish: the interface speaks the study's language, the words appear in
reading order, and the stored levels point at the intended words."""

import io

import pytest
from django.core.management import call_command
from django.utils import translation
from django.utils.translation import gettext
from playwright.sync_api import expect

from annotation.models import Annotation, Corpus, PrerequisiteQuestion, Study, Word
from annotation.services.studies import ClipSelection, study_create
from tests.browser.participant_helpers import play_to_end, prolific_link

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CASES = {
    "mandarin": {
        "language": "zh",
        "interface": "zh-hans",
        "transcript": "我今天很喜欢音乐。",
        "words": ["我", "今天", "很", "喜欢", "音乐"],
        "rtl": False,
    },
    "arabic": {
        "language": "ar",
        "interface": "ar",
        "transcript": "أنا أحب الموسيقى كثيرا اليوم",
        "words": None,
        "rtl": True,
    },
    "spanish": {
        "language": "es",
        "interface": "es",
        "transcript": "Hoy me gusta mucho la música",
        "words": None,
        "rtl": False,
    },
}


def translated(language: str, message: str) -> str:
    with translation.override(language):
        return gettext(message)


def study_in(case: dict, corpus_folder) -> Study:
    extra = {"words": case["words"]} if case["words"] else {}
    corpus_folder.add("clip", case["transcript"], seconds=1.2, language=case["language"], **extra)
    corpus_folder.write_jsonl()
    call_command(
        "import_corpus", str(corpus_folder.root), "--corpus", case["language"], "--no-progress", stdout=io.StringIO()
    )
    return study_create(
        name=f"study-{case['language']}",
        corpus=Corpus.objects.get(name=case["language"]),
        selection=ClipSelection(),
        status=Study.Status.LIVE,
        clips_per_task=1,
        attention_checks_per_task=0,
        interface_language=case["interface"],
        consent_text="…",
        headphone_check=Study.HeadphoneCheck.NONE,  # the check in every language: tests/i18n
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_task_in_the_participants_language(production_page, production_server, corpus_folder, name):
    page = production_page
    case = CASES[name]
    study = study_in(case, corpus_folder)
    language = case["interface"]
    page.route(
        "https://app.prolific.com/**", lambda route: route.fulfill(body="back on Prolific")
    )  # no outside network

    page.goto(prolific_link(production_server.url, study))
    expect(page.locator("html")).to_have_attribute("lang", language)
    expect(page.locator("html")).to_have_attribute("dir", "rtl" if case["rtl"] else "ltr")
    consent = translated(language, "I agree and want to take part")
    assert consent != "I agree and want to take part"
    expect(page.locator("button[name=agree][value=yes]")).to_have_text(consent)
    page.click("button[name=agree][value=yes]")
    for question in PrerequisiteQuestion.objects.filter(study=study):
        page.check(f"input[name=q{question.pk}][value='{question.accepted[0]}']")
    page.click("form.screening button[type=submit]")
    expect(page.locator("button[type=submit]")).to_have_text(translated(language, "Start"))
    page.click("button[type=submit]")

    expect(page.locator("#submit")).to_have_text(translated(language, "Submit and continue"))
    expect(page.locator("#gate-reason")).to_have_text(translated(language, "Listen to the whole clip to continue."))
    stored_words = list(Word.objects.order_by("index").values_list("text", flat=True))
    buttons = page.locator("button.word")
    shown = [text.split(",")[0].strip() for text in buttons.all_inner_texts()]
    assert list(shown) == [w.split(",")[0] for w in stored_words]  # DOM order is reading order
    boxes = [buttons.nth(i).bounding_box() for i in range(2)]
    if case["rtl"]:
        assert boxes[0]["x"] > boxes[1]["x"], "in a right-to-left script the first word sits rightmost"
        buttons.nth(0).focus()
        page.keyboard.press("ArrowLeft")  # Left moves forward in reading order
        assert page.evaluate("document.activeElement.dataset.index") == "1"
    else:
        assert boxes[0]["x"] < boxes[1]["x"]

    play_to_end(page)
    target = 3 if name == "mandarin" else 1
    buttons.nth(target).click()
    buttons.nth(target).click()
    expect(buttons.nth(target)).to_have_attribute("data-level", "2")
    page.click("#submit")
    expect(page).to_have_url(f"{production_server.url}/s/{study.slug}/done/")

    levels = Annotation.objects.get().levels
    assert levels.index(2) == target
    assert Word.objects.get(index=target).text == stored_words[target]
    if name == "mandarin":
        assert stored_words[target] == "喜欢"
    expect(page.locator("h1")).to_have_text(translated(language, "Thank you!"))
