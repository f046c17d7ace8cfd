"""A CAST listener study's task page (issue 20, defect 8): with at least 0 words and no limit, a
listener submits a rendition with no word marked, and one with every word heavily marked."""

import pytest
from playwright.sync_api import expect

from annotation.models import Annotation
from tests.browser.participant_helpers import current_item, play_to_end, study_with_audio, walk_to_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRANSCRIPTS = {"r1": "she never said he stole the money", "r2": "i did not take your red umbrella"}
ANY = "Mark the words the speaker emphasized, if any: leaving every word unmarked is an answer too."


def test_a_flat_and_an_over_expressive_rendition_are_both_answers(production_page, production_server, corpus_folder):
    rules = {"min_marked_words": 0, "max_marked_fraction": None}
    study = study_with_audio(corpus_folder, TRANSCRIPTS, name="Cast listeners", **rules)
    page = production_page
    walk_to_task(page, production_server.url, study)
    submit, words = page.locator("#submit"), page.locator("#task-item .word")

    flat = current_item(page)
    expect(page.locator("#marking-rule")).to_have_text(ANY)
    play_to_end(page)
    expect(submit).to_be_enabled()  # nothing marked
    submit.click()

    expect(page.locator("#task-item")).not_to_have_attribute("data-item", str(flat))
    over = current_item(page)
    play_to_end(page)
    for index in range(words.count()):
        words.nth(index).click()
        words.nth(index).click()
    expect(page.locator("#gate-reason")).to_have_text("")
    submit.click()

    expect(page).to_have_url(f"{production_server.url}/s/{study.slug}/done/")
    assert Annotation.objects.get(item_id=flat).levels == [0] * 7
    assert Annotation.objects.get(item_id=over).levels == [2] * 7
