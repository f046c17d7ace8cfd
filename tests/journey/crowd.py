"""The journey's participants: how each one marks a clip (one word a clip, mostly the word the
"speaker" stressed, the instructed word on the attention check), and the scripted ones, who go
through the real pages over HTTP as bench/_loadgen.py's participants do: study link, consent,
screening, instructions, then each clip played to its end (the server checks the playback
reports and the wall time) before its submit."""

import json
import random
import re
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from tests.journey.corpus import CHECK_TRANSCRIPT, CHECK_WORD, CLIP_SECONDS

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._loadgen import (
    Browser,
    HttpTransport,
    Request,
    Sleep,
    item_page,
    playback_events,
    prolific_id,
    run_steps,
)

WORDS = re.compile(rb'<button type="button" class="word" data-index="\d+"[^>]*>([^<]*)<')
AGREEMENT = 0.85  # how often a participant marks the stressed word


def stressed_word(words: list[str]) -> int:
    """The word the crowd mostly hears stressed: fixed per clip, spread over positions."""
    return zlib.crc32(" ".join(words).encode()) % len(words)


def levels_for(words: list[str], rng: random.Random) -> list[int]:
    levels = [0] * len(words)
    if " ".join(words) == CHECK_TRANSCRIPT:
        levels[CHECK_WORD] = 2
        return levels
    stressed = stressed_word(words)
    chosen = stressed if rng.random() < AGREEMENT else rng.choice([i for i in range(len(words)) if i != stressed])
    levels[chosen] = 2 if rng.random() < 0.3 else 1
    return levels


@dataclass
class ScriptedResult:
    submitted: int = 0
    finished: bool = False
    errors: list[str] = field(default_factory=list)


def scripted_participant(port: int, slug: str, answers: dict[str, str], seed: int) -> ScriptedResult:
    """One participant over HTTP (one keep-alive connection, as a browser tab), from the study
    link to the done page; `answers`: screening field name -> the answer given."""
    rng, result = random.Random(seed), ScriptedResult()
    browser = Browser(HttpTransport("127.0.0.1", port))
    try:
        first = run_steps(_enter(slug, answers, rng), browser)
        run_steps(_annotate(slug, first, rng, result), browser)
    except Exception as error:  # reported by the test with every other participant's
        result.errors.append(f"{type(error).__name__}: {error}")
    finally:
        browser.transport.close()
    return result


def _enter(slug: str, answers: dict[str, str], rng: random.Random):
    """The Prolific link, then consent, screening and instructions (which claims a task): each
    answered with a redirect to the next page; returns the task page."""
    ids = {"PROLIFIC_PID": prolific_id(rng), "STUDY_ID": prolific_id(rng), "SESSION_ID": prolific_id(rng)}
    reply = yield Request("GET", f"/s/{slug}/?{urlencode(ids)}")
    for page, fields in (("consent", {"agree": "yes"}), ("screening", answers), ("instructions", {})):
        reply = yield from _follow(reply, page)
        reply = yield Request("POST", f"/s/{slug}/{page}/", fields)
    reply = yield from _follow(reply, "task")
    if reply.status != 200:
        raise RuntimeError(f"task page {reply.status}: {reply.body[:200]!r}")
    return reply.body


def _follow(reply, page: str):
    location = reply.header("Location") or ""
    if reply.status != 302 or not location.rstrip("/").endswith(page):
        raise RuntimeError(f"expected a redirect to the {page} page, got {reply.status} {location!r}")
    return (yield Request("GET", location))


def _annotate(slug: str, body: bytes, rng: random.Random, result: ScriptedResult):
    clock = time.perf_counter()
    while True:
        item = item_page(body)
        words = [text.decode() for text in WORDS.findall(body)]
        if item is None or len(words) != item.word_count:
            result.errors.append(f"no task item on the page: {body[:200]!r}")
            return
        started_ms = 1000 * (time.perf_counter() - clock)
        duration = CLIP_SECONDS
        yield Sleep(duration + 0.05)  # the clip plays to its end
        events = [{"kind": "play", "track": 0, "t": 0, "rate": 1, "at": started_ms}]
        events += playback_events(duration, started_ms)
        fields = {"levels": ",".join(map(str, levels_for(words, rng))), "events": json.dumps(events)}
        headers = {"HX-Request": "true", "HX-Target": "task-item", "HX-Current-URL": f"/s/{slug}/task/"}
        reply = yield Request("POST", f"/s/{slug}/task/items/{item.item_id}/submit", fields, None, headers)
        if reply.status != 200:
            result.errors.append(f"submit {reply.status}: {reply.body[:200]!r}")
            return
        result.submitted += 1
        if (reply.header("HX-Redirect") or "").rstrip("/").endswith("/done"):
            result.finished = True
            return
        body = reply.body
