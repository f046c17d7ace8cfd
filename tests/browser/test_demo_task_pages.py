"""A whole task of the demo study in Chromium, as a local participant meets it (issue 20, defect 13):
the study's instructions without a generic copy of them, the number of words to mark said up
front, the level legend on one line at 1280 px, and a next step on the last page."""

import io

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotation.models import Annotation, Study, TaskItem
from annotation.services.gates import marking_rule, max_marks
from tests.browser.participant_helpers import current_item, play_to_end

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GENERIC_HELP = "Listen to each clip to the end. Then click or tap each word the speaker emphasized"
NEXT_STEP = "There is nothing more to do here: you can close this page."
DESKTOP = {"width": 1280, "height": 900}


@pytest.fixture
def demo(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    call_command("demo_setup", stdout=io.StringIO())
    return Study.objects.get(slug="demo")


def legend_rows(page) -> int:
    """How many lines the level legend takes, checking that nothing in it sticks out of the page."""
    boxes = page.locator(".legend li").evaluate_all("""items => items.map(item => {
        const box = item.getBoundingClientRect();
        return [box.top, box.right, item.scrollWidth - item.clientWidth];
    })""")
    right = page.locator(".page").evaluate("page => page.getBoundingClientRect().right")
    assert len(boxes) == 3
    assert all(box[1] <= right and box[2] <= 0 for box in boxes), (boxes, right)
    return len({round(box[0]) for box in boxes})


def test_a_local_participant_does_a_whole_demo_task(production_page_factory, production_server, demo, tmp_path):
    page = production_page_factory(viewport=DESKTOP)
    base = production_server.url
    page.goto(f"{base}/s/demo/")
    page.get_by_role("button", name="I agree and want to take part").click()
    for question in demo.prerequisites.order_by("position"):
        page.get_by_role("group", name=question.text).get_by_label(question.accepted[0], exact=True).check()
    page.get_by_role("button", name="Continue").click()

    expect(page.get_by_text("Click each word you heard emphasized")).to_be_visible()  # the study's own
    expect(page.get_by_text(GENERIC_HELP)).to_have_count(0)
    assert legend_rows(page) == 1
    page.screenshot(path=str(tmp_path / "instructions-1280.png"), full_page=True)
    page.get_by_role("button", name="Start").click()

    for number in range(1, demo.clips_per_task + 1):
        expect(page.locator(".progress span")).to_have_text(f"Clip {number} of {demo.clips_per_task}")
        item = TaskItem.objects.get(pk=current_item(page))
        most = max_marks(word_count=item.word_count, min_marked=1, max_fraction=demo.max_marked_fraction)
        rule = marking_rule(fewest=1, most=most, word_count=item.word_count)
        one = "Mark exactly 1 word: the one the speaker emphasized most."
        assert rule == (f"Mark 1 to {most} words the speaker emphasized." if most > 1 else one)
        expect(page.locator("#marking-rule")).to_have_text(rule)
        if number == 1:
            assert legend_rows(page) == 1
            page.screenshot(path=str(tmp_path / "task-1280.png"), full_page=True)
            print(f"\n1280 px screenshots: {tmp_path}")
        play_to_end(page)
        page.locator("#task-item .word").first.click()
        page.locator("#submit").click()
        if number < demo.clips_per_task:
            expect(page.locator("#task-item")).not_to_have_attribute("data-item", str(item.pk))

    expect(page).to_have_url(f"{base}/s/demo/done/")
    expect(page.get_by_text("You have finished the task.")).to_be_visible()
    expect(page.get_by_text(NEXT_STEP)).to_be_visible()
    assert Annotation.objects.filter(participant__study=demo).count() == demo.clips_per_task


def test_a_local_participant_screened_out_is_told_what_to_do_next(production_page, production_server, demo):
    page, base = production_page, production_server.url
    page.goto(f"{base}/s/demo/")
    page.get_by_role("button", name="I agree and want to take part").click()
    first, *others = demo.prerequisites.order_by("position")
    rejected = next(choice for choice in first.choices if choice not in first.accepted)
    page.get_by_role("group", name=first.text).get_by_label(rejected, exact=True).check()
    for question in others:
        page.get_by_role("group", name=question.text).get_by_label(question.accepted[0], exact=True).check()
    page.get_by_role("button", name="Continue").click()

    expect(page.get_by_text("This study is for a different group of people.")).to_be_visible()
    expect(page.get_by_text(NEXT_STEP)).to_be_visible()
