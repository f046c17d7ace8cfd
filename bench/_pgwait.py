"""What the bench database's backends are doing while a level runs: PostgreSQL's
own view of where time waits (pg_stat_activity's wait events, and which
statements wait on another backend's lock), sampled from a thread of the load
generator. Used by bench/annotate_load.py's realistic mode.

A sample every `interval` seconds reads each backend of the database:
`active` ones by wait event (None: on a CPU or ready for one; `Lock/...`: a
heavyweight lock, a row or a transaction; `LWLock/WALWrite` and
`IO/WALSync`: the commit's flush), `idle in transaction` ones (a transaction
held open between round trips, with whatever it locked), and those that
`pg_blocking_pids` says wait for another backend, by their statement."""

import collections
import re
import threading
from dataclasses import dataclass, field

import psycopg

_SAMPLE = """
    SELECT state, wait_event_type, wait_event, query, cardinality(pg_blocking_pids(pid))
    FROM pg_stat_activity
    WHERE datname = %s AND pid <> pg_backend_pid() AND backend_type = 'client backend'
"""


@dataclass
class Waits:
    samples: int = 0
    by_state: collections.Counter = field(default_factory=collections.Counter)  # backend state -> backend-samples
    active: collections.Counter = field(default_factory=collections.Counter)  # wait event -> backend-samples
    statements: collections.Counter = field(default_factory=collections.Counter)  # (wait event, statement) -> same
    blocked: collections.Counter = field(default_factory=collections.Counter)  # statement -> backend-samples
    holding: collections.Counter = field(default_factory=collections.Counter)  # idle in transaction: last statement

    def per_sample(self, count: int) -> float:
        return count / self.samples if self.samples else 0.0

    def lines(self) -> list[str]:
        """The summary's lines: backends per sample by what they were doing."""
        if not self.samples:
            return ["PostgreSQL: no samples"]
        active = sum(self.active.values())
        waits = ", ".join(f"{event} {self.per_sample(n):.2f}" for event, n in self.active.most_common(5))
        lines = [
            f"PostgreSQL backends, mean of {self.samples} samples: active {self.per_sample(active):.2f} ({waits}); "
            f"idle in transaction {self.per_sample(self.by_state['idle in transaction']):.2f}; "
            f"waiting for another backend's lock {self.per_sample(sum(self.blocked.values())):.2f}"
        ]
        for (event, statement), n in self.statements.most_common(4):
            lines.append(f"  active {self.per_sample(n):.2f}: {event} in {statement}")
        for statement, n in self.blocked.most_common(3):
            lines.append(f"  waiting on a lock {self.per_sample(n):.2f}: {statement}")
        return lines


class WaitSampler:
    """Samples the database's backends in a thread, between `with` entry and exit."""

    def __init__(self, url: str, database: str, interval: float = 0.05):
        self.url, self.database, self.interval = url, database, interval
        self.waits = Waits()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pg wait sampler", daemon=True)

    def __enter__(self) -> Waits:
        self._thread.start()
        return self.waits

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as connection:
            while not self._stop.wait(self.interval):
                self._sample(connection.execute(_SAMPLE, [self.database]).fetchall())

    def _sample(self, rows) -> None:
        waits = self.waits
        waits.samples += 1
        for state, wait_type, wait_event, query, blockers in rows:
            waits.by_state[state] += 1
            if state == "active":
                event = f"{wait_type}/{wait_event}" if wait_type else "CPU"
                waits.active[event] += 1
                waits.statements[event, statement_name(query)] += 1
            elif state == "idle in transaction":
                waits.holding[statement_name(query)] += 1
            if blockers:
                waits.blocked[statement_name(query)] += 1


def statement_name(query: str) -> str:
    """A statement in a few words: its verb and the tables it names."""
    text = re.sub(r"\s+", " ", query or "").replace('"', "").strip()
    verb = text.split(" ", 1)[0].upper() if text else "?"
    tables = list(dict.fromkeys(re.findall(r"\b(annotation_\w+)", text)))[:3]
    return f"{verb} {', '.join(tables)}".strip()
