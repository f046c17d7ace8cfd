"""Playback verification: pure, no database."""

import pytest

from annotation.playback import Event, verify

DURATION = 4.0


def listen(*steps, start=1000.0):
    """steps: (kind, media_time, seconds_after_start[, rate]); received as they happen."""
    events = []
    for step in steps:
        kind, media, after = step[:3]
        rate = step[3] if len(step) > 3 else 1.0
        events.append(Event(kind, media, rate, client_seconds=after, received_seconds=start + after))
    return events


def straight_through(rate=1.0, step=0.25):
    steps = [("play", 0.0, 0.0, rate)]
    t = 0.0
    while t < DURATION:
        t = min(DURATION, t + step * rate)
        steps.append(("timeupdate", t, t / rate))
    steps.append(("ended", DURATION, DURATION / rate))
    return listen(*steps)


def verdict(events, now_after, coverage=0.95):
    return verify(events, duration=DURATION, now_seconds=1000.0 + now_after, required_coverage=coverage)


def test_playing_to_the_end_passes():
    result = verdict(straight_through(), now_after=4.1)
    assert result.ok and result.coverage == pytest.approx(1.0)


def test_not_playing_at_all_fails():
    result = verdict([], now_after=10)
    assert not result.ok and result.coverage == 0 and result.wall_seconds == 0


def test_half_played_fails_on_coverage():
    steps = [("play", 0.0, 0.0)] + [("timeupdate", t / 4, t / 4) for t in range(1, 9)] + [("pause", 2.0, 2.0)]
    result = verdict(listen(*steps), now_after=10)
    assert result.coverage == pytest.approx(0.5) and not result.coverage_ok and result.wall_time_ok


def test_seeking_to_the_end_is_not_listening():
    events = listen(
        ("play", 0.0, 0.0),
        ("timeupdate", 0.25, 0.25),
        ("seeking", 3.9, 0.3),
        ("seeked", 3.9, 0.3),
        ("timeupdate", 4.0, 0.4),
        ("ended", 4.0, 0.4),
    )
    result = verdict(events, now_after=5)
    assert result.coverage < 0.1 and not result.ok


def test_a_jump_passed_off_as_a_timeupdate_counts_as_a_seek():
    events = listen(("play", 0.0, 0.0), ("timeupdate", 0.25, 0.25), ("timeupdate", 4.0, 0.5), ("ended", 4.0, 0.5))
    assert verdict(events, now_after=5).coverage < 0.1


def test_page_clock_cannot_claim_more_time_than_the_server_saw():
    # All events arrive together 0.5 s after the play was received, but claim 4 s of playing.
    steps = straight_through()
    forged = [
        Event(e.kind, e.media_time, e.rate, e.client_seconds, 1000.0 if e.kind == "play" else 1000.5) for e in steps
    ]
    assert verdict(forged, now_after=0.6).coverage < 0.2


def test_events_batched_after_real_playing_still_count():
    # play arrives at once; the rest arrive in one batch with the submission, 4 s later.
    steps = straight_through()
    batched = [
        Event(e.kind, e.media_time, e.rate, e.client_seconds, 1000.0 if e.kind == "play" else 1004.05) for e in steps
    ]
    assert verdict(batched, now_after=4.05).ok


def test_wall_time_must_cover_the_clip_at_the_playback_rate():
    events = straight_through(rate=2.0)
    assert verdict(events, now_after=2.0).ok
    early = verdict(events, now_after=1.0)
    assert not early.wall_time_ok and early.required_wall_seconds == pytest.approx(1.7)


def test_a_claimed_rate_above_the_browsers_fastest_earns_no_shorter_wait():
    events = straight_through(rate=4.0)
    assert verdict(events, now_after=DURATION / 4 + 0.1).wall_time_ok is False
    assert verdict(events, now_after=DURATION / 4 + 0.1).required_wall_seconds == pytest.approx(DURATION / 2 - 0.3)
    # and a position racing ahead at 4x is credited at 2x at most: it reads as seeking, not listening
    assert not verdict(events, now_after=DURATION).coverage_ok


def test_listening_in_two_halves_with_a_pause_and_a_seek_back_counts():
    events = listen(
        ("play", 0.0, 0.0),
        ("timeupdate", 1.0, 1.0),
        ("timeupdate", 2.0, 2.0),
        ("pause", 2.0, 2.0),
        ("seeking", 1.0, 5.0),
        ("seeked", 1.0, 5.0),
        ("play", 1.0, 6.0),
        ("timeupdate", 2.0, 7.0),
        ("timeupdate", 3.0, 8.0),
        ("timeupdate", 4.0, 9.0),
        ("ended", 4.0, 9.0),
    )
    assert verdict(events, now_after=9.1).ok


def test_coverage_threshold_is_configurable():
    steps = [("play", 0.0, 0.0)] + [("timeupdate", t / 4, t / 4) for t in range(1, 15)] + [("pause", 3.5, 3.5)]
    events = listen(*steps)
    assert not verdict(events, now_after=5, coverage=0.95).ok
    assert verdict(events, now_after=5, coverage=0.85).ok


def test_repeated_small_jumps_cannot_add_up():
    steps = [("play", 0.0, 0.0)]
    for k in range(12):
        steps += [("seeked", k * 0.33, 0.01), ("timeupdate", k * 0.33 + 0.3, 0.01)]
    assert verdict(listen(*steps), now_after=5).coverage < 0.1
