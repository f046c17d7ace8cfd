"""Was the clip really listened to? Decided from playback events, on the server.

Pure: events in, verdict out. The page reports play, pause, seeking/seeked,
timeupdate, ratechange and ended events, each with the media position, the
playback rate, the page's own clock and the page load it came from (a reload
starts a new page clock). The page's clock is trusted only for spacing events
within the span the server itself saw pass: from the moment it handed the clip
out to the receipt of each report. Each page load's clock is anchored with its
first event at the hand-out, the earliest it can have happened, and no event
counts as later than the receipt of any report that holds it or a later
event. So a page cannot claim more listening than the wall time since the
hand-out, and reports may arrive late (queued by a busy server, or all with
the submit) or be lost and replayed without costing an honest page anything.

A stretch counts as listened when the position advanced while playing by no
more than the elapsed time times the rate (plus a little slack, once per
clip); a bigger jump is a seek, and seeking forward never counts.
"""

from dataclasses import dataclass

# Timers and event delivery jitter; also lets the last timeupdate before
# "ended" (fired up to 250 ms apart in browsers) count in full.
SLACK_SECONDS = 0.35
# The fastest the browsers' own audio controls play (Chrome's and Firefox's speed menus stop at
# 2x). A page reporting a faster rate is credited at this one, so claiming 4x cannot shorten the
# wait below half the clip; a clip really played faster earns less than all of its length.
MAX_RATE = 2.0
MIN_RATE = 0.25


@dataclass(frozen=True)
class Event:
    kind: str
    media_time: float
    rate: float
    client_seconds: float
    received_seconds: float  # the server's clock when the event arrived
    page: int = 0  # the page load that sent it


@dataclass(frozen=True)
class Verdict:
    coverage: float  # share of [0, duration] actually played
    wall_seconds: float  # from the clip's hand-out to now, by the server's clock
    required_wall_seconds: float
    required_coverage: float

    @property
    def coverage_ok(self) -> bool:
        return self.coverage >= self.required_coverage

    @property
    def wall_time_ok(self) -> bool:
        return self.wall_seconds >= self.required_wall_seconds

    @property
    def ok(self) -> bool:
        return self.coverage_ok and self.wall_time_ok


def verify(
    events: list[Event],
    *,
    duration: float,
    now_seconds: float,
    required_coverage: float,
    handed_out_seconds: float | None = None,
    tolerance_seconds: float = 0.3,
) -> Verdict:
    """`events` in the order they were stored (ties in the page's clock keep it);
    `handed_out_seconds` when the server handed the clip out, by default its
    receipt of the first of them."""
    start = _start(events, handed_out_seconds, now_seconds)
    pages: dict[int, list[Event]] = {}
    for event in events:
        pages.setdefault(event.page, []).append(event)
    intervals, fastest_rate, slack = [], 1.0, SLACK_SECONDS
    for page_events in pages.values():  # one slack budget for all of them
        played, fastest, slack = _played_intervals(_trusted_times(page_events, start), slack)
        intervals += played
        fastest_rate = max(fastest_rate, fastest)
    required_wall = max(0.0, duration / fastest_rate - tolerance_seconds) if duration > 0 else 0.0
    return Verdict(
        coverage=_covered(intervals, duration),
        wall_seconds=now_seconds - start,
        required_wall_seconds=required_wall,
        required_coverage=required_coverage,
    )


def _start(events: list[Event], handed_out_seconds: float | None, now_seconds: float) -> float:
    if handed_out_seconds is not None:
        return handed_out_seconds
    return min((event.received_seconds for event in events), default=now_seconds)


def _trusted_times(events: list[Event], start: float) -> list[tuple[Event, float]]:
    """Pair each of one page load's events, in the order of the page's clock,
    with a time the server can vouch for: the page's clock shifted so that its
    first event falls at `start`, but no later than the receipt of that event
    or of any after it. An honest page's events really happened at or after
    those times, so the cap never takes anything from it."""
    ordered = sorted(events, key=lambda event: event.client_seconds)
    if not ordered:
        return []
    offset = start - ordered[0].client_seconds
    latest, caps = float("inf"), []
    for event in reversed(ordered):
        latest = min(latest, event.received_seconds)
        caps.append(latest)
    caps.reverse()
    return [
        (event, max(start, min(event.client_seconds + offset, cap))) for event, cap in zip(ordered, caps, strict=True)
    ]


def _rate(value: float) -> float:
    return min(max(value, MIN_RATE), MAX_RATE)


def _played_intervals(
    events: list[tuple[Event, float]], slack: float
) -> tuple[list[tuple[float, float]], float, float]:
    """Stretches played, the fastest rate used and the slack left. While playing,
    the position may advance by the elapsed time times the rate; the slack is
    one budget for the whole clip (SLACK_SECONDS, over all its page loads), so
    repeated small jumps cannot add up. A bigger advance is a seek and earns nothing."""
    intervals: list[tuple[float, float]] = []
    playing = False
    position = since = 0.0
    rate = fastest = 1.0
    for event, time in events:
        if playing and event.kind in ("timeupdate", "pause", "ended", "ratechange", "seeking"):
            advance = event.media_time - position
            earned = (time - since) * rate
            if 0 < advance <= earned + slack:
                intervals.append((position, event.media_time))
                slack -= max(0.0, advance - earned)
        if event.kind == "play":
            playing = True
        elif event.kind in ("pause", "ended"):
            playing = False
        if event.kind in ("play", "ratechange"):
            rate = _rate(event.rate)
            fastest = max(fastest, rate)
        position, since = event.media_time, time
    return intervals, fastest, slack


def _covered(intervals: list[tuple[float, float]], duration: float) -> float:
    if duration <= 0:
        return 1.0
    total, reach = 0.0, 0.0
    for start, end in sorted((max(0.0, s), min(duration, e)) for s, e in intervals):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return min(1.0, total / duration)
