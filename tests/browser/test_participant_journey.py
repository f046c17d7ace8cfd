"""A participant's whole way, in headless Chromium: from the Prolific link to the
completion redirect, with real audio played to its end through the signed link."""

import json
import time
from urllib.parse import parse_qs

import pytest
from playwright.sync_api import expect

from annotation.models import Annotation, Participant, Task
from tests.browser.participant_helpers import (
    CLIP_SECONDS,
    csrf_token,
    current_item,
    no_horizontal_overflow,
    play_to_end,
    study_with_audio,
    walk_to_task,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Seven words each: at most floor(30 % of 7) = 2 may be marked.
TRANSCRIPTS = {
    "c1": "she never said he stole the money",
    "c2": "i did not take your red umbrella",
    "c3": "we will meet at the station tomorrow",
}
WORD_LOOK = """word => {
  const style = getComputedStyle(word);
  return [style.backgroundColor, style.color, style.fontWeight, style.textDecorationLine, style.borderTopColor];
}"""


def word_state(word) -> dict:
    return word.evaluate("""w => ({
        level: w.dataset.level, pressed: w.getAttribute("aria-pressed"),
        spoken: w.querySelector(".level-name").textContent })""")


@pytest.fixture
def study(corpus_folder):
    return study_with_audio(corpus_folder, TRANSCRIPTS)


def test_participant_walks_from_the_prolific_link_to_the_completion_redirect(production_page, production_server, study):
    page = production_page
    base, slug = production_server.url, study.slug
    task_url = f"{base}/s/{slug}/task/"
    prolific_url = f"https://app.prolific.com/submissions/complete?cc={study.completion_code}"

    # Nothing leaves the machine: other hosts are refused, and Prolific is answered here.
    outside, prolific = [], []
    page.context.route(
        lambda url: not url.startswith(base), lambda route: (outside.append(route.request.url), route.abort())
    )
    page.route(
        "https://app.prolific.com/**",
        lambda route: (
            prolific.append(route.request.url),
            route.fulfill(status=200, content_type="text/html", body="<h1>Prolific (stand-in)</h1>"),
        ),
    )

    walk_to_task(page, base, study)
    progress, submit = page.locator(".progress"), page.locator("#submit")
    reason, errors = page.locator("#gate-reason"), page.locator("#gate-errors")
    words = page.locator("#task-item .word")

    # --- Clip 1: every gate, first in the page, then on the server ---
    expect(progress).to_contain_text("Clip 1 of 3")
    first_item = current_item(page)
    expect(words).to_have_count(7)
    expect(submit).to_be_disabled()
    expect(reason).to_be_visible()
    expect(reason).to_have_text("Listen to the whole clip to continue.")

    # Enabling the button by hand does not get past the server.
    submit.evaluate("button => { button.disabled = false; }")
    with page.expect_response(lambda r: r.url.endswith(f"/items/{first_item}/submit")) as refused:
        submit.click()
    assert refused.value.status == 422
    expect(errors).to_be_visible()
    expect(errors).to_contain_text("Listen to the whole clip first (played so far: 0 %).")
    expect(errors).to_contain_text("Mark at least 1 word as emphasized.")
    expect(progress).to_contain_text("Clip 1 of 3")
    assert not Annotation.objects.exists()

    # The real clip, through its signed link, played to its end.
    assert page.get_attribute("#clip-audio", "src").startswith("/a/audio/")
    play_to_end(page)
    assert page.eval_on_selector("#clip-audio", "a => a.duration") == pytest.approx(1.2, abs=0.1)
    expect(reason).to_have_text("Mark at least 1 word.")
    expect(submit).to_be_disabled()

    # Clicking cycles a word 0 -> 1 -> 2 -> 0: three looks, as in the legend, and announced.
    word = words.nth(2)
    looks = {0: word.evaluate(WORD_LOOK)}
    expected = {1: ("true", ", emphasized"), 2: ("true", ", heavily emphasized"), 0: ("false", ", not emphasized")}
    for level in (1, 2, 0):
        word.click()
        assert word_state(word) == {"level": str(level), "pressed": expected[level][0], "spoken": expected[level][1]}
        looks.setdefault(level, word.evaluate(WORD_LOOK))
        chip = page.locator(f"#task-item .legend .word-chip[data-level='{level}']")
        expect(chip).to_be_visible()
        assert chip.evaluate(WORD_LOOK)[:4] == word.evaluate(WORD_LOOK)[:4]
    assert word.evaluate(WORD_LOOK) == looks[0]
    assert len({tuple(look) for look in looks.values()}) == 3, looks
    expect(page.locator("#task-item .legend")).to_contain_text("not emphasized")
    expect(page.locator("#task-item .legend")).to_contain_text("heavily emphasized")

    # The keyboard: 0/1/2 set a level, Space and Enter cycle, Right moves on.
    first = words.nth(0)
    first.focus()
    for key, level in (("2", "2"), ("0", "0"), ("1", "1"), ("Space", "2"), ("Space", "0"), ("Enter", "1")):
        page.keyboard.press(key)
        assert word_state(first)["level"] == level, key
    expect(reason).to_have_text("")
    expect(submit).to_be_enabled()
    page.keyboard.press("ArrowRight")
    expect(words.nth(1)).to_be_focused()
    page.keyboard.press("2")
    assert word_state(words.nth(1)) == {"level": "2", "pressed": "true", "spoken": ", heavily emphasized"}

    # A third mark is one too many for seven words.
    words.nth(6).click()
    expect(reason).to_have_text("Mark at most 2 words.")
    expect(submit).to_be_disabled()
    words.nth(6).focus()
    page.keyboard.press("0")
    expect(reason).to_have_text("")
    expect(submit).to_be_enabled()

    submit.click()
    expect(progress).to_contain_text("Clip 2 of 3")
    stored = Annotation.objects.get(item_id=first_item)
    assert stored.levels == [1, 2, 0, 0, 0, 0, 0]
    assert stored.coverage >= study.required_coverage

    # --- Clip 2: a reload in the middle resumes here, unsaved marks gone ---
    second_item = current_item(page)
    assert second_item != first_item
    expect(errors).to_be_empty()
    expect(reason).to_have_text("Listen to the whole clip to continue.")
    words.nth(3).click()
    page.reload()
    expect(page).to_have_url(task_url)
    expect(progress).to_contain_text("Clip 2 of 3")
    assert current_item(page) == second_item
    assert [word_state(words.nth(i))["level"] for i in range(7)] == ["0"] * 7
    expect(submit).to_be_disabled()

    # The back button leads back to the current clip, never to the submitted one:
    # the page before is fetched again (no-store), and the server sends it here.
    back = page.go_back()
    assert back is not None and back.request.redirected_from.url == f"{base}/s/{slug}/instructions/"
    expect(page).to_have_url(task_url)
    expect(progress).to_contain_text("Clip 2 of 3")
    assert current_item(page) == second_item

    # Nor can the submitted clip be changed by posting to it again, as a form or as htmx.
    old_submit = f"{base}/s/{slug}/task/items/{first_item}/submit"
    token = csrf_token(page)
    as_form = page.request.post(
        old_submit, form={"csrfmiddlewaretoken": token, "levels": "0,0,2,0,0,0,1"}, max_redirects=0
    )
    assert as_form.status == 409
    assert "answers are final" in as_form.text() and "Clip 2 of 3" in as_form.text()
    as_htmx = page.request.post(
        old_submit, form={"levels": "0,0,2,0,0,0,1"}, headers={"X-CSRFToken": token, "HX-Request": "true"}
    )
    assert as_htmx.status == 409 and "answers are final" in as_htmx.text()
    # And a stale page still aimed at the submitted clip shows the refusal where the gates speak.
    page.evaluate(
        """url => {
        const form = document.querySelector("#task-item form");
        form.setAttribute("hx-post", url);
        form.action = url;
        htmx.process(form);
        document.querySelector("#submit").disabled = false;
    }""",
        old_submit,
    )
    words.nth(4).click()
    submit.evaluate("button => { button.disabled = false; }")
    with page.expect_response(old_submit) as stale:
        submit.click()
    assert stale.value.status == 409
    expect(errors).to_have_text("This clip was already submitted, and answers are final.")
    expect(progress).to_contain_text("Clip 2 of 3")
    stored.refresh_from_db()
    assert stored.levels == [1, 2, 0, 0, 0, 0, 0]
    page.reload()
    assert current_item(page) == second_item

    play_to_end(page)
    words.nth(2).click()
    submit.click()
    expect(progress).to_contain_text("Clip 3 of 3")

    # --- Clip 3, then the completion page and its redirect to Prolific ---
    # A reload in the middle of the clip: one replay to the end is enough, at once
    # (the new page's clock starts again at 0, and its reports count all the same).
    page.wait_for_timeout(1500)
    page.eval_on_selector("#clip-audio", "audio => { audio.muted = true; return audio.play(); }")
    page.wait_for_function("() => document.querySelector('#clip-audio').currentTime > 0.4")
    page.reload()
    expect(progress).to_contain_text("Clip 3 of 3")
    # Every report of the replay travels with the submit: one request for the clip.
    posts = []
    page.on("request", lambda request: posts.append(request) if request.method == "POST" else None)
    replayed = time.monotonic()
    play_to_end(page)
    words.nth(5).click()
    words.nth(5).click()
    submit.click()
    expect(page).to_have_url(f"{base}/s/{slug}/done/")
    assert time.monotonic() - replayed < 2 * CLIP_SECONDS  # the clip once, and the submit
    assert [post.url.rsplit("/", 1)[-1] for post in posts] == ["submit"]
    carried = json.loads(parse_qs(posts[0].post_data)["events"][0])
    assert {"play", "ended"} <= {event["kind"] for event in carried}
    expect(page.locator(".code")).to_have_text(study.completion_code)
    expect(page.get_by_role("link", name="Return to Prolific now")).to_have_attribute("href", prolific_url)
    no_horizontal_overflow(page)

    page.wait_for_url(prolific_url, timeout=10_000)  # the page's meta refresh, after 5 s
    assert prolific == [prolific_url]
    assert outside == []
    participant = Participant.objects.get(study=study)
    assert participant.completed_at is not None
    assert Task.objects.get(participant=participant).status == Task.Status.COMPLETED
    assert sorted(Annotation.objects.values_list("levels", flat=True)) == sorted(
        [[1, 2, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 2, 0]]
    )


def test_the_task_fits_a_phone(production_page_factory, production_server, corpus_folder, tmp_path):
    study = study_with_audio(
        corpus_folder, {"p1": "the internationalization committee absolutely never said that"}, name="Phone"
    )
    base = production_server.url
    page = production_page_factory(
        viewport={"width": 375, "height": 740}, device_scale_factor=2, is_mobile=True, has_touch=True
    )
    page.route("https://app.prolific.com/**", lambda route: route.fulfill(status=200, body="Prolific (stand-in)"))

    walk_to_task(page, base, study, check=no_horizontal_overflow)
    words = page.locator("#task-item .word")
    expect(words).to_have_count(7)
    no_horizontal_overflow(page)
    heights = words.evaluate_all("words => words.map(word => word.getBoundingClientRect().height)")
    assert min(heights) >= 44, heights
    widest = words.evaluate_all("words => Math.max(...words.map(word => word.getBoundingClientRect().right))")
    assert widest <= 375

    play_to_end(page)
    words.nth(1).tap()
    words.nth(5).tap()
    words.nth(5).tap()
    assert [word_state(words.nth(i))["level"] for i in (1, 5)] == ["1", "2"]
    page.wait_for_timeout(500)  # let the tap highlight fade before the screenshot
    shot = tmp_path / "task-375x740.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"\nphone-width screenshot: {shot}")
    assert shot.stat().st_size > 0

    page.locator("#submit").tap()
    expect(page).to_have_url(f"{base}/s/{study.slug}/done/")
    no_horizontal_overflow(page)


def test_a_submit_the_server_could_not_take_for_a_moment_is_sent_again(production_page, production_server, study):
    """A 503 (the database unreachable for a moment) is retried once by the page itself."""
    page, base = production_page, production_server.url
    walk_to_task(page, base, study)
    first_item = current_item(page)
    answers = []

    def unavailable_once(route):
        answers.append(route.request.post_data)
        if len(answers) == 1:
            route.fulfill(status=503, headers={"Retry-After": "1"}, body="<h1>Please try again in a moment</h1>")
        else:
            route.continue_()

    page.route(f"**/items/{first_item}/submit", unavailable_once)
    play_to_end(page)
    page.locator("#task-item .word").nth(2).click()
    page.locator("#submit").click()

    expect(page.locator(".progress")).to_contain_text("Clip 2 of 3")
    assert len(answers) == 2 and "ended" in answers[1]  # the retry carries the reports the first try did
    assert Annotation.objects.get(item_id=first_item).levels == [0, 0, 1, 0, 0, 0, 0]
