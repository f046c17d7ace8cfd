"""An adaptive study (exact stopping) in Chromium: participants enter by the study link, play each
clip to its end and click its words, until one is told that no clip is left. The clips every
listener marked alike stop where the exact rule says, before the target; the contested one gets
its whole target; and each later participant's task is only the clips still listening."""

import re

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from annotation.models import Annotation, Study, TaskItem
from annotation.services.adaptive import item_state
from tests.browser.participant_helpers import current_item, play_to_end, study_with_audio, walk_to_instructions

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TARGET = 5
# Seven words each: two of them may be marked (30 %).
TRANSCRIPTS = {
    "c1": "she never said he stole the money",
    "c2": "i did not take your red umbrella",
    "c3": "we will meet at the station tomorrow",
}
CONTESTED = "c2"  # every other listener also marks its second word, heavily
NO_CLIP_LEFT = "There is no clip left for you to annotate in this study."


def levels_of(clip: str, listener: int) -> list[int]:
    """Every listener marks the first word; on the contested clip, every other listener the second too."""
    levels = [1, 0, 0, 0, 0, 0, 0]
    if clip == CONTESTED and listener % 2 == 1:
        levels[1] = 2
    return levels


def pid_of(listener: int) -> str:
    return f"{listener:024x}"


def scripted_stop(study: Study, clip: str) -> int:
    """After how many listeners the study's rule settles this clip, given what they are scripted to click."""
    levels = np.array([levels_of(clip, listener) for listener in range(TARGET)])
    for seen in range(1, TARGET + 1):
        settled, _ = item_state(study, (levels[:seen] >= 1).sum(axis=0), (levels[:seen] == 2).sum(axis=0), seen)
        if settled:
            return seen
    return TARGET


def mark(page: Page, levels: list[int]) -> None:
    """Click each word as often as its level (a click steps 0 -> 1 -> 2)."""
    words = page.locator("#task-item .word")
    expect(words).to_have_count(len(levels))
    for index, level in enumerate(levels):
        for _ in range(level):
            words.nth(index).click()


def take_part(page: Page, base: str, study: Study, listener: int) -> int:
    """One participant through the pages, every clip of their task played and marked as scripted;
    the size of the task they were given, as its clip counter says (0: none was left)."""
    walk_to_instructions(page, base, study, pid=pid_of(listener))
    page.get_by_role("button", name="Start").click()
    no_task = page.get_by_role("heading", name="No task available")
    page.locator("#task-item").or_(no_task).wait_for()
    if no_task.is_visible():
        expect(page.get_by_text(NO_CLIP_LEFT)).to_be_visible()
        return 0
    progress = page.locator(".progress span")
    total = int(re.fullmatch(r"Clip 1 of (\d+)", progress.inner_text()).group(1))
    for number in range(1, total + 1):
        expect(progress).to_have_text(f"Clip {number} of {total}")
        item = TaskItem.objects.select_related("clip").get(pk=current_item(page))
        play_to_end(page)
        mark(page, levels_of(item.clip.external_id, listener))
        page.locator("#submit").click()
        if number < total:
            expect(page.locator("#task-item")).not_to_have_attribute("data-item", str(item.pk))
    expect(page).to_have_url(f"{base}/s/{study.slug}/done/")
    return total


def test_exact_stopping_ends_the_unanimous_clips_early_through_the_real_pages(
    production_page_factory, production_server, corpus_folder
):
    study = study_with_audio(
        corpus_folder, TRANSCRIPTS, name="Adaptive", target_annotations=TARGET, adaptive_mode=Study.Adaptive.EXACT
    )
    stops = {clip: scripted_stop(study, clip) for clip in TRANSCRIPTS}
    # With 5 to come, 3 marks make the first word's majority, and 0 of 3 leave the others none.
    assert stops == {"c1": 3, "c2": TARGET, "c3": 3}

    task_sizes = []
    for listener in range(TARGET + 1):
        page = production_page_factory()
        page.route("https://app.prolific.com/**", lambda route: route.fulfill(status=200, body="Prolific (stand-in)"))
        task_sizes.append(take_part(page, production_server.url, study, listener))
        if not task_sizes[-1]:
            break
    # Each participant's task holds the clips not yet settled when they claimed it; the last gets none.
    assert task_sizes == [sum(stop > listener for stop in stops.values()) for listener in range(TARGET)] + [0]
    assert task_sizes == [3, 3, 3, 1, 1, 0]

    for item in study.items.select_related("clip"):
        clip = item.clip.external_id
        assert item.completed_count == stops[clip], clip
        assert item.settled, clip
        stored = Annotation.objects.filter(item__study_item=item).select_related("item__task__participant")
        assert {row.item.task.participant.prolific_pid: row.levels for row in stored} == {
            pid_of(listener): levels_of(clip, listener) for listener in range(stops[clip])
        }
    contested = study.items.get(clip__external_id=CONTESTED)
    assert contested.word_marks == [TARGET, 2, 0, 0, 0, 0, 0] and contested.word_heavy[:2] == [0, 2]
