"""Simulated participants for bench/annotate_load.py: a small browser, the
participant's way through a study, and the measurements around them.

Standard library only. A participant's way through a study is written once,
as a script (a generator) that yields what to do next: a `Request`, answered
with the `Response`, or a `Sleep`. Two drivers run it: `run_steps` with a
`Browser` in a thread (over HTTP, one keep-alive http.client connection per
participant, as a browser tab would; or in this process through Django's WSGI
handler, so the same script drives a single request under a query counter or
a profiler), and `run_steps_async` with an `AsyncBrowser` on an asyncio event
loop (one keep-alive asyncio stream per participant), so that a thousand
paced participants cost the load generator one thread, not a thousand.
"""

import asyncio
import contextlib
import http.client
import io
import json
import os
import random
import re
import statistics
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urlsplit

ITEM = re.compile(rb'data-item="(\d+)"')
LEVELS_INPUT = re.compile(rb'name="levels" value="([0-9,]*)"')
TIMEUPDATE_SECONDS = 0.25  # browsers fire timeupdate every 15-250 ms; Chromium every 250 ms


@dataclass
class Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((value for key, value in self.headers if key.lower() == name), None)


class HttpTransport:
    """One keep-alive connection; http.client reconnects when the server closes it."""

    def __init__(self, host: str, port: int, timeout: float = 30.0):
        self.connection = http.client.HTTPConnection(host, port, timeout=timeout)
        self.host = f"{host}:{port}"

    def __call__(self, method: str, target: str, body: bytes | None, headers: dict[str, str]) -> Response:
        reused = self.connection.sock is not None
        try:
            self.connection.request(method, target, body=body, headers=headers)
            reply = self.connection.getresponse()
            data = reply.read()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.connection.close()
            if not reused:
                raise
            # The server closed an idle keep-alive connection as the request
            # went out: a browser sends it again on a new one, and so do we.
            return self(method, target, body, headers)
        except (http.client.HTTPException, OSError):
            self.connection.close()  # a broken keep-alive connection is not reused
            raise
        return Response(reply.status, reply.getheaders(), data)

    def close(self) -> None:
        self.connection.close()


class WsgiTransport:
    """Requests through Django's WSGI handler in this process: every middleware
    and request signal runs as under gunicorn, minus the HTTP parsing."""

    host = "127.0.0.1"

    def __init__(self):
        from django.core.handlers.wsgi import WSGIHandler

        self.app = WSGIHandler()

    def __call__(self, method: str, target: str, body: bytes | None, headers: dict[str, str]) -> Response:
        parts = urlsplit(target)
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": parts.path,
            "QUERY_STRING": parts.query,
            "SCRIPT_NAME": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "wsgi.input": io.BytesIO(body or b""),
            "wsgi.errors": io.StringIO(),
            "wsgi.url_scheme": "http",
            "wsgi.version": (1, 0),
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "CONTENT_LENGTH": str(len(body or b"")),
        }
        for name, value in headers.items():
            key = name.upper().replace("-", "_")
            environ[key if key == "CONTENT_TYPE" else f"HTTP_{key}"] = value
        started: list = []
        result = self.app(environ, lambda status, headers, exc_info=None: started.extend([status, headers]))
        try:
            data = b"".join(result)
        finally:
            result.close()  # fires request_finished, as a WSGI server does
        return Response(int(started[0].split()[0]), started[1], data)

    def close(self) -> None:
        pass


class AsyncHttpTransport:
    """One keep-alive HTTP/1.1 connection over asyncio streams: what
    `HttpTransport` sends and reads, on an event loop. Reconnects, as
    http.client does, when the server has closed the connection."""

    def __init__(self, host: str, port: int, timeout: float = 30.0):
        self.address = (host, port)
        self.host = f"{host}:{port}"
        self.timeout = timeout
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def __call__(self, method: str, target: str, body: bytes | None, headers: dict[str, str]) -> Response:
        if self.reader is not None and self.reader.at_eof():
            self.close()  # the server closed the idle connection meanwhile
        reused = self.writer is not None
        try:
            async with asyncio.timeout(self.timeout):
                if self.writer is None:
                    self.reader, self.writer = await asyncio.open_connection(*self.address)
                self.writer.write(_request_head(method, target, body, headers) + (body or b""))
                await self.writer.drain()
                response, keep_alive = await _read_response(self.reader, method)
        except (_RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.close()
            if not reused:
                raise
            # The server closed an idle keep-alive connection as the request
            # went out: a browser sends it again on a new one, and so do we.
            return await self(method, target, body, headers)
        except (http.client.HTTPException, asyncio.IncompleteReadError, OSError, ValueError):  # TimeoutError: OSError
            self.close()  # a broken keep-alive connection is not reused
            raise
        if not keep_alive:
            self.close()
        return response

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def aclose(self) -> None:
        writer = self.writer
        self.close()
        if writer is not None:
            with contextlib.suppress(OSError):
                await writer.wait_closed()


class _RemoteDisconnected(ConnectionError):
    """The server closed the connection without answering (http.client.RemoteDisconnected)."""


def _request_head(method: str, target: str, body: bytes | None, headers: dict[str, str]) -> bytes:
    """The request line and headers, as http.client sends them."""
    sent = {"Accept-Encoding": "identity", **headers}
    if body is not None or method in ("POST", "PUT", "PATCH"):
        sent["Content-Length"] = str(len(body or b""))
    lines = [f"{method} {target} HTTP/1.1", *(f"{name}: {value}" for name, value in sent.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _read_response(reader: asyncio.StreamReader, method: str) -> tuple[Response, bool]:
    """One response: its status, headers and body (by Content-Length, chunked or
    to the end of the connection); and whether the connection stays open."""
    line = await reader.readline()
    if not line:
        raise _RemoteDisconnected("the server closed the connection without a response")
    version, _, rest = line.decode("latin-1").rstrip("\r\n").partition(" ")
    if not version.startswith("HTTP/") or not rest[:3].isdigit():
        raise http.client.BadStatusLine(line.decode("latin-1"))
    status = int(rest[:3])
    headers = []
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))
    found = {name.lower(): value for name, value in headers}
    connection = found.get("connection", "").lower()
    keep_alive = "close" not in connection if version == "HTTP/1.1" else "keep-alive" in connection
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return Response(status, headers, b""), keep_alive
    if "chunked" in found.get("transfer-encoding", "").lower():
        chunks = []
        while size := int((await reader.readline()).split(b";")[0], 16):
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)  # CRLF after the chunk
        while await reader.readline() not in (b"\r\n", b"\n", b""):  # trailers
            pass
        return Response(status, headers, b"".join(chunks)), keep_alive
    if "content-length" in found:
        return Response(status, headers, await reader.readexactly(int(found["content-length"]))), keep_alive
    return Response(status, headers, await reader.read()), False  # delimited by the end of the connection


@dataclass
class Request:
    """What a participant script asks its driver to send; answered with the `Response`."""

    method: str
    path: str
    fields: dict | None = None  # form-encoded body
    json_body: object = None
    headers: dict[str, str] | None = None


@dataclass
class Sleep:
    """What a participant script asks its driver to wait."""

    seconds: float


Steps = Generator[Request | Sleep, Response | None, object]


class _Cookies:
    """Cookies and the headers a browser sends; no redirects followed unless asked."""

    def __init__(self, transport):
        self.transport = transport
        self.cookies: dict[str, str] = {}

    def _prepare(self, request: Request) -> tuple[bytes | None, dict[str, str]]:
        sent = {"Host": self.transport.host, "Accept": "text/html", **(request.headers or {})}
        body = None
        if request.fields is not None:
            body = urlencode(request.fields).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        elif request.json_body is not None:
            body = json.dumps(request.json_body).encode()
            sent["Content-Type"] = "application/json"
        if request.method == "POST":
            sent["X-CSRFToken"] = self.cookies.get("csrftoken", "")
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        return body, sent

    def _receive(self, response: Response) -> Response:
        for name, value in response.headers:
            if name.lower() == "set-cookie":
                for morsel in SimpleCookie(value).values():
                    self.cookies[morsel.key] = morsel.value
        return response


class Browser(_Cookies):
    """A browser over a blocking transport (`HttpTransport`, `WsgiTransport`)."""

    def request(
        self,
        method: str,
        path: str,
        *,
        fields: dict | None = None,
        json_body=None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        body, sent = self._prepare(request := Request(method, path, fields, json_body, headers))
        return self._receive(self.transport(request.method, request.path, body, sent))


class AsyncBrowser(_Cookies):
    """A browser over `AsyncHttpTransport`, on an event loop."""

    async def request(
        self,
        method: str,
        path: str,
        *,
        fields: dict | None = None,
        json_body=None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        body, sent = self._prepare(request := Request(method, path, fields, json_body, headers))
        return self._receive(await self.transport(request.method, request.path, body, sent))


def run_steps(steps: Steps, browser: Browser):
    """Run a participant script in this thread; returns what the script returns.
    A failed request is raised inside the script, where it asked for it."""
    try:
        step = next(steps)
        while True:
            if isinstance(step, Sleep):
                time.sleep(step.seconds)
                step = steps.send(None)
                continue
            try:
                reply = browser.request(
                    step.method, step.path, fields=step.fields, json_body=step.json_body, headers=step.headers
                )
            except Exception as error:
                step = steps.throw(error)
            else:
                step = steps.send(reply)
    except StopIteration as stop:
        return stop.value


async def run_steps_async(steps: Steps, browser: AsyncBrowser):
    """Run a participant script on the running event loop (as `run_steps` does)."""
    try:
        step = next(steps)
        while True:
            if isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
                step = steps.send(None)
                continue
            try:
                reply = await browser.request(
                    step.method, step.path, fields=step.fields, json_body=step.json_body, headers=step.headers
                )
            except Exception as error:
                step = steps.throw(error)
            else:
                step = steps.send(reply)
    except StopIteration as stop:
        return stop.value


def prolific_id(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(24))


@dataclass
class ItemPage:
    item_id: int
    word_count: int


def item_page(body: bytes) -> ItemPage | None:
    item, levels = ITEM.search(body), LEVELS_INPUT.search(body)
    if not item or not levels:
        return None
    return ItemPage(int(item.group(1)), len(levels.group(1).split(b",")))


def enter_and_claim(browser: Browser, slug: str, answers: dict[str, str], rng: random.Random, *, wrap=None) -> ItemPage:
    """Study link, consent, screening, instructions (which claims a task), task page."""
    return run_steps(entry_steps(slug, answers, rng, wrap=wrap), browser)


def entry_steps(slug: str, answers: dict[str, str], rng: random.Random, *, wrap=None) -> Steps:
    """`enter_and_claim` as a script; returns the first item. `wrap("claim")`, a context manager
    factory, wraps the instructions POST, the request that claims the task."""
    wrap = wrap or (lambda kind: contextlib.nullcontext())
    ids = {"PROLIFIC_PID": prolific_id(rng), "STUDY_ID": prolific_id(rng), "SESSION_ID": prolific_id(rng)}
    page = yield from _follow((yield Request("GET", f"/s/{slug}/?{urlencode(ids)}")), "consent")
    page = yield from _follow((yield Request("POST", f"/s/{slug}/consent/", fields={"agree": "yes"})), "screening")
    page = yield from _follow((yield Request("POST", f"/s/{slug}/screening/", fields=answers)), "instructions")
    with wrap("claim"):
        claimed = yield Request("POST", f"/s/{slug}/instructions/", fields={})
    page = yield from _follow(claimed, "task")
    first = item_page(page.body)
    if page.status != 200 or first is None:
        raise RuntimeError(f"task page without an item: {page.status} {page.body[:200]!r}")
    return first


def _follow(response: Response, expect: str) -> Steps:
    """GET the redirect target, which must be the named step's page."""
    location = response.header("Location") or ""
    if response.status != 302 or not location.rstrip("/").endswith(expect):
        raise RuntimeError(f"expected a redirect to {expect!r}, got {response.status} {location!r}")
    return (yield Request("GET", location))


@dataclass
class ParticipantLog:
    """What one participant saw; merged by the bench after the run."""

    submit_seconds: list[float] = field(default_factory=list)
    event_seconds: list[float] = field(default_factory=list)
    page_seconds: list[float] = field(default_factory=list)  # task page loads (realistic mode)
    # (seconds seen here, the app's Server-Timing) of each submit and task page, where the server sends it
    submit_timings: list[tuple[float, dict[str, float]]] = field(default_factory=list)
    page_timings: list[tuple[float, dict[str, float]]] = field(default_factory=list)
    acknowledged: dict[int, list[int]] = field(default_factory=dict)  # item id -> levels sent
    errors: list[str] = field(default_factory=list)


def playback_events(duration: float, started_ms: float) -> list[dict]:
    """What a browser reports after "play" for a clip played to the end at rate 1."""
    events = []
    position = TIMEUPDATE_SECONDS
    while position < duration:
        events.append(
            {"kind": "timeupdate", "track": 0, "t": round(position, 3), "rate": 1, "at": started_ms + 1000 * position}
        )
        position += TIMEUPDATE_SECONDS
    end_ms = started_ms + 1000 * duration
    events += [
        {"kind": kind, "track": 0, "t": duration, "rate": 1, "at": end_ms + offset}
        for offset, kind in ((0.0, "timeupdate"), (0.2, "pause"), (0.4, "ended"))
    ]
    return events


@dataclass(frozen=True)
class Pace:
    """How a participant takes each clip: seconds before pressing play and
    seconds of marking after the end, each drawn from its range; `until`
    (time.perf_counter) ends the participant's work after the clip under way."""

    before_play: tuple[float, float] = (0.0, 0.0)
    marking: tuple[float, float] = (0.0, 0.0)
    until: float = float("inf")


def annotate(
    browser: Browser,
    slug: str,
    first: ItemPage,
    durations: dict[int, float],
    log: ParticipantLog,
    rng: random.Random,
    *,
    reports: str = "submit",
    pace: Pace = Pace(),
    wrap=None,
) -> None:
    """`annotate_steps` in this thread."""
    run_steps(annotate_steps(slug, first, durations, log, rng, reports=reports, pace=pace, wrap=wrap), browser)


def annotate_steps(
    slug: str,
    first: ItemPage,
    durations: dict[int, float],
    log: ParticipantLog,
    rng: random.Random,
    *,
    reports: str = "submit",
    pace: Pace = Pace(),
    wrap=None,
) -> Steps:
    """Play each clip to the end, mark one word, submit; until the done page
    (or `pace.until`, after at least the first clip).

    The clip ends its duration after playback starts, then the participant
    marks for `pace.marking` seconds. As static/annotation/task.js does, the
    playback reports (play, timeupdates, pause, ended) travel with the submit,
    one request per clip (`reports="submit"`); or, as a page that reports as
    it goes, "play" is POSTed when playback starts and the rest in a POST of
    its own before the submit (`reports="separate"`; the server judges both
    alike). Only submit requests are timed into submit_seconds. `wrap(kind)`,
    a context manager factory, wraps each "events" and "submit" request (to
    count queries or profile)."""
    wrap = wrap or (lambda kind: contextlib.nullcontext())
    clock = time.perf_counter()  # the page's performance.now() starts here
    page = first
    # The first clip is under way once its page is open: a participant whose page
    # came late (a cold server, an arrival near the end) still answers it.
    while page is not None and (page is first or time.perf_counter() < pace.until):
        item_id, duration = page.item_id, durations[page.item_id]
        base = f"/s/{slug}/task/items/{item_id}"
        yield Sleep(rng.uniform(*pace.before_play))
        started = time.perf_counter()
        started_ms = 1000 * (started - clock)
        play = [{"kind": "play", "track": 0, "t": 0, "rate": 1, "at": started_ms}]
        ending = playback_events(duration, started_ms)
        if reports == "separate" and not (yield from _report(base, play, log, wrap)):
            return
        yield Sleep(max(0.0, started + duration - time.perf_counter()))
        if reports == "separate":
            if not (yield from _report(base, ending, log, wrap)):
                return
            play = ending = []
        yield Sleep(rng.uniform(*pace.marking))
        levels = [0] * page.word_count
        levels[rng.randrange(page.word_count)] = 1
        fields = {"levels": ",".join(map(str, levels)), "events": json.dumps(play + ending)}
        headers = {"HX-Request": "true", "HX-Target": "task-item", "HX-Current-URL": f"/s/{slug}/task/"}
        sent = time.perf_counter()
        with wrap("submit"):
            reply = yield Request("POST", f"{base}/submit", fields=fields, headers=headers)
        log.submit_seconds.append(time.perf_counter() - sent)
        if timing := server_timing(reply.header("Server-Timing")):
            log.submit_timings.append((log.submit_seconds[-1], timing))
        page = item_page(reply.body) if reply.status == 200 else None
        done = reply.status == 200 and (reply.header("HX-Redirect") or "").rstrip("/").endswith("/done")
        if page is None and not done:
            log.errors.append(f"submit {reply.status}: {reply.body[:120]!r}")
            return
        log.acknowledged[item_id] = levels


def _report(base: str, events: list[dict], log: ParticipantLog, wrap) -> Steps:
    sent = time.perf_counter()
    with wrap("events"):
        reply = yield Request("POST", f"{base}/events", json_body=events)
    log.event_seconds.append(time.perf_counter() - sent)
    if reply.status != 204:
        log.errors.append(f"events {reply.status}: {reply.body[:120]!r}")
    return reply.status == 204


def server_timing(value: str | None) -> dict[str, float]:
    """{"app": ms, "cpu": ms, ...} from a Server-Timing header (bench/_timed_wsgi.py writes
    the bench's); {} without one."""
    found = {}
    for part in (value or "").split(","):
        name, _, rest = part.strip().partition(";")
        key, _, number = rest.partition("=")
        if key in ("dur", "desc"):
            found[name] = float(number)
    return found


def percentiles(seconds: list[float]) -> tuple[float, float, float]:
    """p50, p95, p99 in milliseconds."""
    if len(seconds) < 2:
        value = 1000 * seconds[0] if seconds else float("nan")
        return value, value, value
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return 1000 * cuts[49], 1000 * cuts[94], 1000 * cuts[98]


class CpuMeter:
    """CPU seconds used by this process, the web server's processes, the PostgreSQL
    backends of one database, and the whole machine, between two readings.
    Counted per process, so that a backend replaced meanwhile (Django closes
    connections older than CONN_MAX_AGE) loses only its own last stretch."""

    TICK = os.sysconf("SC_CLK_TCK")
    GROUPS = ("load generator", "web server", "postgres")

    def __init__(self, server_pid: int | None, database: str):
        self.server_pid = server_pid
        self.database = database.encode()

    def read(self) -> dict:
        reading = {"machine": _machine_busy_seconds(), **{group: {} for group in self.GROUPS}}
        reading["load generator"][os.getpid()] = _process_seconds(os.getpid())
        for pid in _pids():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    command = handle.read()
                stat = _stat_fields(pid)
            except OSError:
                continue
            if pid == self.server_pid or (self.server_pid and int(stat[1]) == self.server_pid):
                reading["web server"][pid] = _seconds(stat)
            elif command.startswith(b"postgres: ") and (self.database in command or b"walwriter" in command):
                reading["postgres"][pid] = _seconds(stat)
        return reading

    @classmethod
    def cores(cls, before: dict, after: dict, seconds: float) -> dict[str, float]:
        """Cores used by each group, and by every other process on the machine."""
        used = {
            group: sum(spent - before[group].get(pid, 0.0) for pid, spent in after[group].items())
            for group in cls.GROUPS
        }
        used["other processes"] = after["machine"] - before["machine"] - sum(used.values())
        return {group: spent / seconds for group, spent in used.items()}

    @staticmethod
    def processes(before: dict, after: dict, seconds: float, group: str) -> list[float]:
        """Cores used by each process of a group, busiest first (a web server's workers: how evenly
        the load fell on them)."""
        used = [spent - before[group].get(pid, 0.0) for pid, spent in after[group].items()]
        return sorted((spent / seconds for spent in used), reverse=True)


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as handle:
        raw = handle.read()
    return raw[raw.rindex(")") + 2 :].split()  # fields from "state" on; [1] is the parent pid


def _seconds(fields: list[str]) -> float:
    return (int(fields[11]) + int(fields[12])) / CpuMeter.TICK  # utime + stime


def _process_seconds(pid: int) -> float:
    return _seconds(_stat_fields(pid))


def _machine_busy_seconds() -> float:
    with open("/proc/stat") as handle:
        values = [int(value) for value in handle.readline().split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / CpuMeter.TICK
