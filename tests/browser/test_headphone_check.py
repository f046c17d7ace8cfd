"""The headphone check in headless Chromium, as participants meet it: the level set by the
reference noise, then each trial played by the page and answered by clicking 1, 2 or 3. A
listener with headphones passes both tests and reaches the task; one hearing loudspeakers is
screened out with the study's screen-out code. The listeners (tests/browser/headphone_listeners.py)
decide from the sounds the page plays, nothing else."""

import re

import pytest
from playwright.sync_api import expect

from annotation.models import HeadphoneTrial, Participant, Study
from tests.browser.headphone_listeners import headphone_choice, loudspeaker_choice
from tests.browser.participant_helpers import PID, no_horizontal_overflow, prolific_link, study_with_audio

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRANSCRIPTS = {"c1": "she never said he stole the money", "c2": "i did not take your red umbrella"}
TRIALS = 3


def through_screening(page, base, study, *, pid=PID):
    page.goto(prolific_link(base, study, pid=pid))
    expect(page.get_by_text("a short listening check makes sure that you are wearing headphones")).to_be_visible()
    page.get_by_role("button", name="I agree and want to take part").click()
    for question in study.prerequisites.order_by("position"):
        page.get_by_role("group", name=question.text).get_by_label(question.accepted[0], exact=True).check()
    page.get_by_role("button", name="Continue").click()


def set_the_level(page, base, study):
    expect(page).to_have_url(f"{base}/s/{study.slug}/headphones/level/")
    confirm = page.get_by_role("button", name="The volume is set")
    expect(confirm).to_be_disabled()  # until the reference noise has played
    reference = page.locator("audio[data-reference]")
    box = reference.bounding_box()
    page.mouse.click(box["x"] + 18, box["y"] + box["height"] / 2)  # the player's own play button
    expect(confirm).to_be_enabled(timeout=10_000)
    assert page.evaluate("() => !document.querySelector('audio[data-reference]').paused")
    confirm.click()


def answer_trial(page, listener, sizes: list[list[int]]) -> tuple[str, int]:
    """Listen to the trial shown (fetching its three sounds as the page does), press Play, wait for
    the three to be played, and click the listener's choice. Returns the test and the choice."""
    test = page.locator("input[name=test]").get_attribute("value")
    urls = page.locator("#headphone-trial audio").evaluate_all("sounds => sounds.map(s => s.src)")
    bodies = [page.request.get(url).body() for url in urls]
    sizes.append([len(body) for body in bodies])
    choice = listener(test, bodies)
    answers = page.locator("button[data-answer]")
    expect(answers).to_have_count(3)
    for button in answers.all():
        expect(button).to_be_disabled()  # not before the sounds have played
    page.get_by_role("button", name="Play", exact=True).click()
    page.wait_for_selector("#headphone-trial[data-heard]", state="attached", timeout=15_000)
    page.get_by_role("button", name=str(choice + 1), exact=True).click()
    return test, choice


def test_a_listener_with_headphones_sets_the_level_passes_both_tests_and_reaches_the_task(
    production_page, production_server, corpus_folder
):
    page, base = production_page, production_server.url
    study = study_with_audio(
        corpus_folder,
        TRANSCRIPTS,
        headphone_check=Study.HeadphoneCheck.BOTH,
        headphone_check_trials=TRIALS,
        huggins_pass_mark=TRIALS,
        antiphase_pass_mark=TRIALS,
    )
    through_screening(page, base, study)
    set_the_level(page, base, study)

    sizes, tests = [], []
    for part in (1, 2):  # Huggins pitch, then antiphase tones
        for trial in range(1, TRIALS + 1):
            expect(page).to_have_url(f"{base}/s/{study.slug}/headphones/")
            expect(page.get_by_role("heading", name=re.compile(f"Headphone check.*part {part} of 2"))).to_be_visible()
            expect(page.locator(".progress")).to_have_text(f"Sound {trial} of {TRIALS}")
            tests.append(answer_trial(page, headphone_choice, sizes)[0])
    assert tests == ["huggins"] * TRIALS + ["antiphase"] * TRIALS

    expect(page).to_have_url(f"{base}/s/{study.slug}/instructions/")
    page.get_by_role("button", name="Start").click()
    expect(page).to_have_url(f"{base}/s/{study.slug}/task/")

    participant = Participant.objects.get(study=study, prolific_pid=PID)
    assert participant.headphone_check_passed is True and participant.headphone_level_set_at is not None
    answers = HeadphoneTrial.objects.filter(participant=participant)
    assert answers.count() == 2 * TRIALS and all(answers.values_list("correct", flat=True))
    # Every sound of a trial arrived with the same number of bytes: nothing to tell them apart by.
    assert all(len(set(trial)) == 1 for trial in sizes) and len(sizes) == 2 * TRIALS


@pytest.mark.parametrize("test", ["huggins", "antiphase"])
def test_a_listener_on_loudspeakers_fails_and_is_screened_out_with_the_code(
    production_page, production_server, corpus_folder, test
):
    page, base = production_page, production_server.url
    study = study_with_audio(
        corpus_folder,
        TRANSCRIPTS,
        headphone_check=test,
        headphone_check_trials=TRIALS,
        huggins_pass_mark=TRIALS,
        antiphase_pass_mark=TRIALS,
    )
    through_screening(page, base, study)
    set_the_level(page, base, study)
    for _ in range(TRIALS):
        answer_trial(page, loudspeaker_choice, [])

    expect(page.get_by_role("heading", name="Thank you for your time")).to_be_visible()
    expect(page.get_by_text("The headphone check did not succeed, so you cannot take part.")).to_be_visible()
    expect(page.locator(".code")).to_have_text(study.screen_out_code)
    back = page.get_by_role("link", name="Return to Prolific")
    expect(back).to_have_attribute("href", f"https://app.prolific.com/submissions/complete?cc={study.screen_out_code}")

    participant = Participant.objects.get(study=study, prolific_pid=PID)
    assert participant.screened_out and participant.headphone_check_passed is False
    answers = HeadphoneTrial.objects.filter(participant=participant, test=test)
    assert answers.count() == TRIALS and not any(answers.values_list("correct", flat=True))  # mixed, every cue misleads
    page.goto(prolific_link(base, study))
    expect(page).to_have_url(f"{base}/s/{study.slug}/thank-you/")
    expect(page.get_by_text("The headphone check did not succeed")).to_be_visible()


def test_on_a_phone_the_check_is_announced_before_consent_and_its_pages_fit(
    production_page_factory, production_server, corpus_folder
):
    page = production_page_factory(
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        user_agent="Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/126.0 Mobile Safari/537.36",
    )
    base = production_server.url
    study = study_with_audio(corpus_folder, TRANSCRIPTS, headphone_check=Study.HeadphoneCheck.HUGGINS)
    page.goto(prolific_link(base, study))
    warning = page.get_by_role("alert")
    expect(warning).to_contain_text("Its loudspeaker cannot pass the headphone check")
    expect(page.get_by_role("button", name="I agree and want to take part")).to_be_visible()
    through_screening(page, base, study)
    expect(page.get_by_role("alert")).to_contain_text("Its loudspeaker cannot pass the headphone check")
    no_horizontal_overflow(page)
    set_the_level(page, base, study)
    expect(page.locator("button[data-answer]")).to_have_count(3)
    no_horizontal_overflow(page)
