"""Measuring one request in the load bench's own process: statements, round
trips, CPU, and where a submit's time goes (a stack sampler). Used by
bench/annotate_load.py."""

import collections
import contextlib
import random
import re
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench._loadgen import Browser, ParticipantLog, WsgiTransport, annotate, enter_and_claim

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = 15  # claims timed on their own, after the three participants


def item_durations(study) -> dict[int, float]:
    from annotation.models import TaskItem

    return dict(TaskItem.objects.filter(task__study=study).values_list("pk", "duration"))


@dataclass
class Probe:
    round_trips: dict[str, list[list[str]]] = field(default_factory=dict)  # kind -> statements of each request
    orm_queries: dict[str, list[int]] = field(default_factory=dict)
    wall: dict[str, list[float]] = field(default_factory=dict)  # kind -> seconds of each request, unprofiled
    cpu: dict[str, list[float]] = field(default_factory=dict)
    postgres_cpu: dict[str, list[float]] = field(default_factory=dict)  # of the connection's backend
    samples: list[tuple[str, str]] = field(default_factory=list)  # (area, innermost frame) of each stack sample


def probe_in_process(study, answers: dict[str, str], *, reports: str, profile: bool) -> Probe:
    """Three participants through Django's WSGI handler in this process, the
    database otherwise idle: statements and round trips per request; time and
    CPU per request; where a submit's time goes."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    probe = Probe()
    connection.close()  # a fresh connection, well inside CONN_MAX_AGE for the whole probe

    @contextlib.contextmanager
    def count_queries(kind: str):
        connection.ensure_connection()
        with CaptureQueriesContext(connection) as queries, _traced(connection) as statements:
            yield
        probe.round_trips.setdefault(kind, []).append(statements)
        probe.orm_queries.setdefault(kind, []).append(len(queries))

    @contextlib.contextmanager
    def clock(kind: str):
        connection.ensure_connection()
        backend = connection.connection.info.backend_pid
        wall, cpu, postgres = time.perf_counter(), time.thread_time(), _backend_cpu(backend)
        yield
        probe.wall.setdefault(kind, []).append(time.perf_counter() - wall)
        probe.cpu.setdefault(kind, []).append(time.thread_time() - cpu)
        probe.postgres_cpu.setdefault(kind, []).append(_backend_cpu(backend) - postgres)

    sampler = StackSampler(threading.get_ident())

    @contextlib.contextmanager
    def sampled(kind: str):
        sampler.active = kind == "submit"  # a claim is measured, not sampled
        yield
        sampler.active = False

    for name, wrap in (("queries", count_queries), ("clock", clock), ("sampled", sampled)):
        browser, rng = Browser(WsgiTransport()), random.Random(name)
        first = enter_and_claim(browser, study.slug, answers, rng, wrap=wrap)
        log = ParticipantLog()
        with sampler if wrap is sampled else contextlib.nullcontext():
            annotate(browser, study.slug, first, item_durations(study), log, rng, reports=reports, wrap=wrap)
        if log.errors:
            raise RuntimeError(f"in-process participant failed: {log.errors}")
    for index in range(CLAIMS):  # claims alone: the first item's page is not annotated
        enter_and_claim(Browser(WsgiTransport()), study.slug, answers, random.Random(f"claim/{index}"), wrap=clock)
    probe.samples = sampler.samples
    if profile:
        print("the submit's busiest lines (share of stack samples):")
        for (area, where), count in collections.Counter(probe.samples).most_common(25):
            print(f"  {100 * count / len(probe.samples):5.1f} %  {where}  [{area}]")
    return probe


def _backend_cpu(pid: int) -> float:
    """CPU seconds of a PostgreSQL backend, to the nanosecond (the scheduler's own count)."""
    with open(f"/proc/{pid}/schedstat") as handle:
        return int(handle.read().split()[0]) / 1e9


@contextlib.contextmanager
def _traced(connection):
    """The statements sent to PostgreSQL meanwhile, from libpq's own trace:
    every round trip, including BEGIN/COMMIT and the connection health check
    that Django's query log does not show."""
    from psycopg import pq

    pgconn = connection.connection.pgconn
    with tempfile.TemporaryFile() as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        statements: list[str] = []
        try:
            yield statements
        finally:
            pgconn.untrace()  # flushes
            trace.seek(0)
            statements.extend(_round_trips(trace.read().decode(errors="replace")))


_PARSE = re.compile(r'"([^"]*)" "(.*)" \d+', re.S)  # statement name, SQL, parameter count...
_BIND = re.compile(r'"[^"]*" "([^"]*)"')  # portal, statement name
_PREPARED: dict[str, str] = {}  # statement name -> SQL, kept across requests: psycopg prepares once per connection


def _round_trips(trace: str) -> list[str]:
    """One entry per round trip: a simple Query, or what a Sync completes (an
    unnamed statement, a prepared one run by name, or one being prepared)."""
    trips, pending, bound = [], "", False
    for direction, message, text in _messages(trace):
        if direction != "F":
            continue
        if message == "Query":
            trips.append(text[1:-1])
        elif message == "Parse":
            name, pending = _PARSE.match(text).groups()
            bound = False
            if name:
                _PREPARED[name] = pending
        elif message == "Bind":
            statement = _BIND.match(text).group(1)
            pending = _PREPARED.get(statement, "?") if statement else pending
            bound = True
        elif message == "Sync":
            trips.append(pending if bound else f"PREPARE {pending}")
    return trips


def _messages(trace: str) -> list[list[str]]:
    """[direction, message type, text] of each traced message; SQL spanning lines is joined back."""
    messages: list[list[str]] = []
    for line in trace.splitlines():
        parts = line.split("\t", 3)
        if len(parts) >= 3 and parts[0] in ("F", "B"):
            messages.append([parts[0], parts[2], parts[3].strip() if len(parts) > 3 else ""])
        elif messages:
            messages[-1][2] += "\n" + line
    return messages


# Where a submit's time goes: each stack sample counts for the innermost frame
# that is in one of these places (generic helpers, the standard library and
# builtins count for whoever called them).
AREAS = [
    ("PostgreSQL round trips", ()),  # the innermost frame is psycopg sending or waiting on its socket
    ("ORM", ("django/db/models/", "django/db/transaction", "django/db/utils")),
    ("psycopg and Django's DB backend", ("/psycopg/", "django/db/backends/")),
    (
        "templates",
        (
            "django/template/",
            "template_partials/",
            "django/templatetags/",
            "django/utils/html",
            "django/utils/safestring",
            "django/utils/formats",
            "django/utils/translation",
        ),
    ),
    (
        "request, response, middleware",
        (
            "django/core/handlers/",
            "django/middleware/",
            "django/http/",
            "django_htmx/",
            "whitenoise/",
            "django/contrib/",
            "django/urls/",
            "django/utils/cache",
            "django/views/",
            "django/core/signing",
        ),
    ),
    ("our code", (str(ROOT / "annotation"),)),
]


# Where psycopg hands the query to the socket, then waits for the answer. On a
# busy machine the send itself often gives the CPU away: it wakes the backend.
_ROUND_TRIP = {"wait", "_execute_send", "_exec_command"}


class StackSampler:
    """Samples one thread's stack from another thread, every half millisecond
    while `active`: a low-overhead profile of wall time (cProfile would inflate
    call-heavy code such as templates several times over)."""

    def __init__(self, thread_id: int, interval: float = 0.0005):
        self.thread_id, self.interval = thread_id, interval
        self.active = False
        self.samples: list[tuple[str, str]] = []
        self._stop = threading.Event()

    def __enter__(self):
        self._switch = sys.getswitchinterval()
        sys.setswitchinterval(self.interval / 2)  # let the sampler in while the request holds the GIL
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        sys.setswitchinterval(self._switch)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            frame = sys._current_frames().get(self.thread_id)
            if self.active and frame is not None:
                self.samples.append(self._classify(frame))

    @staticmethod
    def _classify(frame) -> tuple[str, str]:
        innermost = f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno} {frame.f_code.co_name}"
        if "/psycopg/" in frame.f_code.co_filename and frame.f_code.co_name in _ROUND_TRIP:
            return "PostgreSQL round trips", innermost
        while frame is not None:
            filename = frame.f_code.co_filename
            for area, marks in AREAS:
                if any(mark in filename for mark in marks):
                    return area, innermost
            frame = frame.f_back
        return "other", innermost
