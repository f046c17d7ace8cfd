"""A live study over really imported audio, and the steps a participant takes in the browser."""

import io
import json

from django.core.management import call_command
from playwright.sync_api import Page, expect

from annotation.models import Corpus, PrerequisiteQuestion, Study
from annotation.services.studies import ClipSelection, study_create

PID, STUDY_ID, SESSION_ID = "5f0c1e2d3b4a596877665544", "6a7b8c9d0e1f2a3b4c5d6e7f", "0123456789abcdef01234567"
CLIP_SECONDS = 1.2


def study_with_audio(corpus_folder, transcripts: dict[str, str], *, name: str = "Journey", **settings) -> Study:
    """Import real clips (WAV in, browser MP3 out) and open a live study over them."""
    for seed, (clip_id, transcript) in enumerate(transcripts.items()):
        corpus_folder.add(clip_id, transcript, seconds=CLIP_SECONDS, seed=seed)
    corpus_folder.write_jsonl()
    call_command(
        "import_corpus", str(corpus_folder.root), "--corpus", name.lower(), "--no-progress", stdout=io.StringIO()
    )
    corpus = Corpus.objects.get(name=name.lower())
    defaults = {
        "status": Study.Status.LIVE,
        "clips_per_task": len(transcripts),
        "attention_checks_per_task": 0,
        "consent_text": "We record which words you mark. Taking part is voluntary.",
        "instructions": "Mark the words the speaker **stressed**.",
        "headphone_check": Study.HeadphoneCheck.NONE,  # the headphone check's tests ask for it
    }
    return study_create(name=name, corpus=corpus, selection=ClipSelection(), **{**defaults, **settings})


def prolific_link(base: str, study: Study, *, pid: str = PID) -> str:
    return f"{base}/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}"


def no_horizontal_overflow(page: Page) -> None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"{page.url} scrolls sideways: {widths[0]} px wide in a {widths[1]} px window"


def arrived(page: Page, url: str) -> None:
    """At `url`, its stylesheets applied: the URL changes when the new page's response comes in,
    before its stylesheets have loaded, and a size measured then is the unstyled page's (on a busy
    machine the phone test once measured 21 px words instead of their 44 px)."""
    expect(page).to_have_url(url)
    page.wait_for_load_state("load")


def walk_to_task(page: Page, base: str, study: Study, *, check=lambda page: None) -> None:
    """From the Prolific link through consent, screening and instructions to the first clip."""
    walk_to_instructions(page, base, study, check=check)
    page.get_by_role("button", name="Start").click()
    arrived(page, f"{base}/s/{study.slug}/task/")


def walk_to_instructions(page: Page, base: str, study: Study, *, pid: str = PID, check=lambda page: None) -> None:
    """From the Prolific link of participant `pid` through consent and screening to the
    instructions, whose Start claims a task."""
    page.goto(prolific_link(base, study, pid=pid))
    expect(page).to_have_url(f"{base}/s/{study.slug}/consent/")
    expect(page.get_by_role("heading", name="Consent")).to_be_visible()
    check(page)
    page.get_by_role("button", name="I agree and want to take part").click()

    arrived(page, f"{base}/s/{study.slug}/screening/")
    check(page)
    for question in PrerequisiteQuestion.objects.filter(study=study).order_by("position"):
        page.get_by_role("group", name=question.text).get_by_label(question.accepted[0], exact=True).check()
    page.get_by_role("button", name="Continue").click()

    arrived(page, f"{base}/s/{study.slug}/instructions/")
    expect(page.locator(".legend")).to_be_visible()
    check(page)


def current_item(page: Page) -> int:
    return int(page.get_attribute("#task-item", "data-item"))


def play_to_end(page: Page) -> None:
    """Really play the clip (muted) to its end, until the page has taken the
    "ended" event in; its reports reach the server with the submit. Waits first for the page
    to have taken the clip in (htmx settles new content a moment after swapping it in)."""
    page.wait_for_selector("#task-item[data-ready]", state="attached")
    page.eval_on_selector("#clip-audio", "audio => { audio.muted = true; return audio.play(); }")
    page.wait_for_selector("#clip-audio[data-heard]", state="attached", timeout=10_000)


def csrf_token(page: Page) -> str:
    return json.loads(page.get_attribute("body", "hx-headers"))["X-CSRFToken"]
