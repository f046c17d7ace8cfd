"""Playback reports through the page's endpoints, as a script would send them (issue 15)."""

import json
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from annotation.models import Annotation, PlaybackEvent, Task, TaskItem
from tests.annotation.study_helpers import live_study
from tests.annotation.test_participant_pages import walk_to_task

pytestmark = pytest.mark.django_db


class Page:
    """One page load of the task page: its id, its own clock, and the server's clock it reports at."""

    def __init__(self, client, study, page_id: int):
        self.client, self.study, self.page_id = client, study, page_id
        self.t0 = timezone.now() + timedelta(seconds=5)  # the server's clock at 0, after the task was claimed

    def event(self, kind, t, client_seconds, track=0):
        return {"kind": kind, "track": track, "t": t, "rate": 1, "at": client_seconds * 1000, "page": self.page_id}

    def report(self, item_id, events, *, at: float):
        with mock.patch("django.utils.timezone.now", return_value=self.t0 + timedelta(seconds=at)):
            return self.client.post(
                f"/s/{self.study.slug}/task/items/{item_id}/events", json.dumps(events), content_type="application/json"
            )

    def submit(self, item_id, *, at: float, events=(), levels="1,0,0,0,0,0,0,0,0,0"):
        data = {"levels": levels, "events": json.dumps(list(events))}
        with mock.patch("django.utils.timezone.now", return_value=self.t0 + timedelta(seconds=at)):
            return self.client.post(f"/s/{self.study.slug}/task/items/{item_id}/submit", data)


def play_through(page, start_client, *, duration=2.0):
    """The events of playing a clip from 0 to its end, by the page's clock: (event, client seconds)."""
    steps = [page.event("play", 0.0, start_client)]
    t = 0.0
    while t < duration:
        t = min(duration, t + 0.25)
        steps.append(page.event("timeupdate", t, start_client + t))
    steps.append(page.event("ended", duration, start_client + duration))
    return steps


def in_batches(page, item_id, steps, *, offset: float):
    """Report as task.js does: play at once, the rest about once a second; `offset` is the
    server's clock minus the page's. Returns the server time of the last report."""
    batch, last = [], 0.0
    for event in steps:
        batch.append(event)
        client = event["at"] / 1000
        if event["kind"] == "play" or len(batch) >= 4:
            last = client + offset
            assert page.report(item_id, batch, at=last).status_code == 204
            batch = []
    if batch:
        last = batch[-1]["at"] / 1000 + offset
        assert page.report(item_id, batch, at=last).status_code == 204
    return last


@pytest.fixture
def study():
    return live_study(clips=6, clips_per_task=3)


def task_items(participant) -> list[int]:
    task = Task.objects.get(participant=participant)
    return list(task.items.order_by("position").values_list("pk", flat=True))


def test_overlapping_waits_across_clips_are_refused(client, study):
    items = task_items(walk_to_task(client, study))
    page = Page(client, study, 7)
    # A script reports "play" on every clip at once, then the whole clip a little later.
    answers = [page.report(item, [page.event("play", 0, 0)], at=0).status_code for item in items]
    for item in items:
        page.report(item, play_through(page, 0)[1:], at=2.1)

    assert answers[0] == 204 and all(status == 409 for status in answers[1:])
    assert page.submit(items[0], at=2.2).status_code == 302
    assert page.submit(items[1], at=2.3).status_code == 422
    assert not PlaybackEvent.objects.filter(item_id__in=items[1:]).exists()


def test_reports_for_clips_not_yet_shown_reveal_nothing(client, study):
    items = task_items(walk_to_task(client, study))
    page = Page(client, study, 7)

    short, long = (page.report(items[2], [page.event("play", t, 0)], at=0) for t in (0.5, 500.0))

    assert (short.status_code, short.content) == (long.status_code, long.content)


def test_after_a_reload_one_replay_to_the_end_is_enough(client, study):
    items = task_items(walk_to_task(client, study))
    old, new = Page(client, study, 1), Page(client, study, 2)
    # The old page had been open 100 s; it played half the clip, then the participant reloaded.
    in_batches(old, items[0], play_through(old, 100.0)[:5], offset=-100.0)
    # The new page's clock starts again near 0; one play to the end.
    last = in_batches(new, items[0], play_through(new, 0.5), offset=1.5)

    response = new.submit(items[0], at=last + 0.1)

    assert response.status_code == 302, response.content.decode()


def test_a_lost_report_does_not_spoil_the_replay(client, study):
    items = task_items(walk_to_task(client, study))
    page = Page(client, study, 3)
    steps = play_through(page, 0.0)
    # The "play" report is lost and the next one arrives a second late.
    page.report(items[0], steps[1:5], at=2.0)
    page.report(items[0], steps[5:], at=2.6)
    assert page.submit(items[0], at=2.7).status_code == 422  # refused: the play was never seen

    last = in_batches(page, items[0], play_through(page, 3.5), offset=0.0)
    response = page.submit(items[0], at=last + 0.1)

    assert response.status_code == 302, response.content.decode()


def test_playback_reports_per_clip_are_capped(client, study):
    items = task_items(walk_to_task(client, study))
    page = Page(client, study, 3)
    report = [page.event("timeupdate", 1.0, 1.0)] * 200

    statuses = [page.report(items[0], report, at=1).status_code for _ in range(15)]

    assert statuses[:10] == [204] * 10 and statuses[10:] == [400] * 5
    assert PlaybackEvent.objects.filter(item_id=items[0]).count() <= 2000
    assert b"too many" in page.report(items[0], report[:1], at=1).content.lower()


NESTED = "[" * 50000 + "]" * 50000


@pytest.mark.parametrize("body", [NESTED, '{"a": ' * 20000 + "1" + "}" * 20000, "\xff", "[1, 2"])
def test_malformed_report_bodies_get_400(client, study, body):
    items = task_items(walk_to_task(client, study))
    page = Page(client, study, 3)

    with mock.patch("django.utils.timezone.now", return_value=page.t0):
        response = client.post(f"/s/{study.slug}/task/items/{items[0]}/events", body, content_type="application/json")

    assert response.status_code == 400 and response.content


def test_a_deeply_nested_submit_gets_400(client, study):
    items = task_items(walk_to_task(client, study))
    data = {"levels": "1,0,0,0,0,0,0,0,0,0", "events": NESTED}

    response = client.post(f"/s/{study.slug}/task/items/{items[0]}/submit", data)

    assert response.status_code == 400
    assert TaskItem.objects.get(pk=items[0]).status == TaskItem.Status.PENDING


def test_the_two_clips_of_a_pair_cannot_be_played_at_the_same_time():
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from annotation.playback import Event
    from annotation.services.gates import playback_problems, playback_verdicts

    item = SimpleNamespace(presentation={"durations": [2.0, 3.0]}, duration=3.0)
    study = SimpleNamespace(required_coverage=0.95)

    def through(track, duration, start):
        steps = [("play", 0.0)] + [("timeupdate", t / 4) for t in range(1, int(duration * 4) + 1)]
        return [(track, Event(kind, t, 1.0, t, start + t)) for kind, t in [*steps, ("ended", duration)]]

    together = through(0, 2.0, 1000.0) + through(1, 3.0, 1000.0)
    one_after_the_other = through(0, 2.0, 1000.0) + through(1, 3.0, 1002.1)

    assert playback_problems(playback_verdicts(item, study, datetime.fromtimestamp(1003.1, UTC), together))
    assert not playback_problems(
        playback_verdicts(item, study, datetime.fromtimestamp(1005.2, UTC), one_after_the_other)
    )


def test_the_hand_written_statements_store_the_same_rows_on_every_backend(client, study):
    """Run on SQLite and on PostgreSQL (the postgres pass of the suite): the same
    reports and submits leave exactly these rows, whichever backend ran the SQL."""
    page, items = handed_out_page(client, study, 41)
    steps = play_through(page, 10.0)
    assert page.report(items[0], steps[:1], at=0).status_code == 204
    assert page.report(items[0], steps[1:5], at=1.0).status_code == 204
    assert page.submit(items[0], at=2.2, events=steps[5:]).status_code == 302
    steps = play_through(page, 13.0)
    assert page.report(items[1], steps[:1], at=3.0).status_code == 204
    assert page.submit(items[1], at=3.5, events=steps[1:3]).status_code == 422  # kept, though refused
    assert page.report(items[1], steps[3:], at=5.1).status_code == 204
    assert page.submit(items[1], at=5.2).status_code == 302
    assert page.report(items[0], steps[:1], at=5.3).status_code == 204  # a late report: dropped

    position = {item: index for index, item in enumerate(items)}
    events = sorted(
        (
            position[e.item_id],
            round((e.received_at - page.t0).total_seconds(), 3),
            e.client_ms,
            e.kind,
            e.track,
            e.media_time,
            e.rate,
            e.page,
        )
        for e in PlaybackEvent.objects.all()
    )
    answers = sorted(
        (
            position[a.item_id],
            a.levels,
            a.coverage,
            a.seconds_spent,
            round((a.submitted_at - page.t0).total_seconds(), 3),
        )
        for a in Annotation.objects.all()
    )

    client_ms = [10000.0, 10250.0, 10500.0, 10750.0, 11000.0, 11250.0, 11500.0, 11750.0, 12000.0, 12000.0]
    times = [0.0, 1.0, 1.0, 1.0, 1.0, 2.2, 2.2, 2.2, 2.2, 2.2]
    kinds = ["play"] + ["timeupdate"] * 8 + ["ended"]
    media = [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.0]
    first = [(0, at, ms, kind, 0, t, 1.0, 41) for at, ms, kind, t in zip(times, client_ms, kinds, media, strict=True)]
    times = [3.0, 3.5, 3.5, 5.1, 5.1, 5.1, 5.1, 5.1, 5.1, 5.1]
    second = [
        (1, at, ms + 3000, kind, 0, t, 1.0, 41) for at, ms, kind, t in zip(times, client_ms, kinds, media, strict=True)
    ]
    assert events == sorted(first + second)
    level = [1] + [0] * 9
    assert answers == [(0, level, 1.0, 2.2, 2.2), (1, level, 1.0, 3.0, 5.2)]  # seconds from each hand-out


# --- One request per clip, and a slow server (issue 15, throughput) ---


def handed_out_page(client, study, page_id: int) -> tuple["Page", list[int]]:
    """A page whose clock 0 is the server's hand-out of the task's first clip (the task's start)."""
    participant = walk_to_task(client, study)
    page = Page(client, study, page_id)
    page.t0 = Task.objects.get(participant=participant).created_at
    return page, task_items(participant)


def sent_as(page, item_id, steps, how: str, *, delay: float = 0.0, start: float = 0.0):
    """Report a play-through `how` the page may: everything with the submit, "play" at once and the rest
    in batches, or batches that each wait `delay` in a busy server's queue before they are handled.
    Returns the events left for the submit."""
    if how == "with the submit":
        return steps
    batches = [steps[:1]] + [steps[i : i + 4] for i in range(1, len(steps), 4)]
    for number, batch in enumerate(batches):
        sent = batch[-1]["at"] / 1000 - start
        late = delay if how == "queued" and number % 2 == 0 else 0.0  # some wait, some do not
        assert page.report(item_id, batch, at=start + sent + late).status_code == 204
    return []


@pytest.mark.parametrize("how", ["with the submit", "separately", "queued"])
def test_an_honest_participant_is_accepted_however_the_reports_travel(client, study, how):
    page, items = handed_out_page(client, study, 5)
    # The page shows the clip at once; the participant presses play after 0.4 s and listens to the end (2 s).
    steps = play_through(page, 0.4)
    left = sent_as(page, items[0], steps, how, delay=1.5)

    response = page.submit(items[0], at=2.5 if how != "queued" else 4.0, events=left)

    assert response.status_code == 302, response.content.decode()
    assert Annotation.objects.get(item_id=items[0]).coverage == 1.0


def test_reports_held_in_a_slow_servers_queue_cost_no_listening(client, study):
    """Every report waits in the queue, the "play" longest: still all of the clip counts."""
    page, items = handed_out_page(client, study, 6)
    steps = play_through(page, 0.2)
    assert page.report(items[0], steps[:1], at=1.9).status_code == 204  # "play", sent at 0.2
    assert page.report(items[0], steps[1:5], at=2.0).status_code == 204  # sent at 1.2
    assert page.report(items[0], steps[5:], at=2.3).status_code == 204  # sent at 2.2

    response = page.submit(items[0], at=2.4)

    assert response.status_code == 302, response.content.decode()
    assert Annotation.objects.get(item_id=items[0]).coverage == 1.0


@pytest.mark.parametrize("how", ["with the submit", "separately"])
@pytest.mark.parametrize(("submitted", "status"), [(1.6, 422), (2.0, 302)])
def test_a_script_is_refused_until_the_clip_could_have_been_heard_since_its_hand_out(
    client, study, how, submitted, status
):
    page, items = handed_out_page(client, study, 9)
    # A script claims a full play-through of the 2 s clip from the moment it was handed out.
    left = sent_as(page, items[0], play_through(page, 0.0), how)
    if how == "separately":
        assert page.report(items[0], [], at=0.0).status_code == 204

    response = page.submit(items[0], at=submitted, events=left)

    assert response.status_code == status
    if status == 422:
        assert "Listen to the whole clip first" in response.content.decode()


def test_the_next_clip_is_handed_out_by_the_submit_of_the_one_before(client, study):
    """Waiting out one clip counts for that clip only: the next one's time starts at its hand-out."""
    page, items = handed_out_page(client, study, 4)
    first, second = play_through(page, 0.0), play_through(page, 0.5)
    # Both play-throughs claimed over the first clip's time, the second sent with its submit.
    assert page.submit(items[0], at=2.1, events=first).status_code == 302

    assert page.submit(items[1], at=2.6, events=second).status_code == 422
    # The page's clock ran 1.6 s behind the server's: a replay at its real pace is taken.
    assert page.submit(items[1], at=6.7, events=play_through(page, 3.0)).status_code == 302
