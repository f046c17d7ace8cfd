"""A submit whose connection drops keeps the listening it carried (issue 20, defect 14): the page
keeps its playback reports until a submit is answered, and sends the submit again once by itself
after a network error or a 5xx, as after a 503."""

import pytest
from playwright.sync_api import expect

from annotation.models import Annotation, PlaybackEvent, StudyItem
from tests.browser.participant_helpers import current_item, play_to_end, study_with_audio, walk_to_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRANSCRIPTS = {"d1": "she never said he stole the money", "d2": "i did not take your red umbrella"}


@pytest.fixture
def study(corpus_folder):
    return study_with_audio(corpus_folder, TRANSCRIPTS, name="Dropped")


def mark_and_submit(page):
    play_to_end(page)
    page.locator("#task-item .word").nth(2).click()
    page.locator("#submit").click()


def test_a_submit_cut_off_before_the_server_is_sent_again_with_its_reports(production_page, production_server, study):
    """The connection is reset under the first submit: the server never saw it (as one that rolled it back)."""
    page = production_page
    walk_to_task(page, production_server.url, study)
    first_item = current_item(page)
    sent = []

    def cut_once(route):
        sent.append(route.request.post_data)
        if len(sent) == 1:
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route(f"**/items/{first_item}/submit", cut_once)
    mark_and_submit(page)

    expect(page.locator(".progress")).to_contain_text("Clip 2 of 2")
    assert len(sent) == 2 and "ended" in sent[1]  # the resend carries the reports the lost submit did
    assert Annotation.objects.get(item_id=first_item).levels == [0, 0, 1, 0, 0, 0, 0]
    assert PlaybackEvent.objects.filter(item_id=first_item, kind="ended").count() == 1


def test_a_submit_answered_by_a_bad_gateway_is_sent_again_and_counted_once(production_page, production_server, study):
    """The server took the submit, but the proxy in front answered 502: the resend is the same
    answer, which the server takes as the one it stored."""
    page = production_page
    walk_to_task(page, production_server.url, study)
    first_item = current_item(page)
    sent = []

    def gateway_fails_once(route):
        sent.append(route.request.post_data)
        if len(sent) == 1:
            route.fetch()  # reaches the server, which stores the answer
            route.fulfill(status=502, body="<h1>Bad gateway</h1>")
        else:
            route.continue_()

    page.route(f"**/items/{first_item}/submit", gateway_fails_once)
    mark_and_submit(page)

    expect(page.locator(".progress")).to_contain_text("Clip 2 of 2")
    assert len(sent) == 2 and "ended" in sent[1]
    assert Annotation.objects.filter(item_id=first_item).count() == 1
    clip = Annotation.objects.get(item_id=first_item).clip_id
    assert StudyItem.objects.get(study=study, clip_id=clip).completed_count == 1
    assert PlaybackEvent.objects.filter(item_id=first_item, kind="ended").count() == 1


def test_after_two_failures_the_reports_wait_for_the_participant_to_submit_again(
    production_page, production_server, study
):
    page = production_page
    walk_to_task(page, production_server.url, study)
    first_item = current_item(page)
    sent = []

    def down_twice(route):
        sent.append(route.request.post_data)
        if len(sent) <= 2:
            route.abort("internetdisconnected")
        else:
            route.continue_()

    page.route(f"**/items/{first_item}/submit", down_twice)
    mark_and_submit(page)

    expect(page.locator("#gate-errors")).to_contain_text("cannot be reached just now")
    expect(page.locator("#submit")).to_be_enabled()
    page.locator("#submit").click()
    expect(page.locator(".progress")).to_contain_text("Clip 2 of 2")
    assert len(sent) == 3 and all("ended" in body for body in sent)
    assert Annotation.objects.get(item_id=first_item).levels == [0, 0, 1, 0, 0, 0, 0]


def test_reports_sent_ahead_into_a_dropped_connection_travel_with_the_submit(production_page, production_server, study):
    """A long listen sends its reports ahead in batches of 100; a batch whose connection drops
    is kept, and reaches the server with the submit."""
    page = production_page
    walk_to_task(page, production_server.url, study)
    first_item = current_item(page)
    page.route("**/events", lambda route: route.abort("connectionreset"))
    submitted = []
    page.route(f"**/items/{first_item}/submit", lambda route: (submitted.append(route.request), route.continue_()))

    play_to_end(page)
    # Enough further reports (the audio element's own events, at its end) to fill a batch, which
    # then goes ahead with the listening in it, into the dropped connection.
    with page.expect_request("**/events"):
        page.eval_on_selector(
            "#clip-audio", "a => { for (let n = 0; n < 100; n++) a.dispatchEvent(new Event('timeupdate')); }"
        )
    page.locator("#task-item .word").nth(2).click()
    page.locator("#submit").click()

    expect(page.locator(".progress")).to_contain_text("Clip 2 of 2")
    assert Annotation.objects.get(item_id=first_item).levels == [0, 0, 1, 0, 0, 0, 0]
    assert PlaybackEvent.objects.filter(item_id=first_item, kind="ended").count() == 1
