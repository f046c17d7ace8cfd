"""Simulated participants annotating at once under granian (or gunicorn) + PostgreSQL: submissions per second, latency, errors.

    .venv/bin/python bench/annotate_load.py [--levels 16,64] [--workers 3 --threads 4] [--profile]
    .venv/bin/python bench/annotate_load.py --mode realistic [--budget-seconds 600]
    .venv/bin/python bench/annotate_load.py --wsgi gunicorn ...  # gunicorn instead of granian

Creates a scratch PostgreSQL database (dropped at the end), migrates it, fills
it with a corpus of clips and a live study, and starts the web server on 127.0.0.1:
granian by default, as the container runs it (docker/web.sh, chosen by this
bench), or gunicorn with `--wsgi gunicorn`.

The hammer (`--mode hammer`, the default): clips of 0.08-0.12 s, so that the
server, not the waiting, sets the rate. Participants really wait out each
clip (the server checks), so N of them can submit at most N / clip length per
second: 64 participants could reach 640/s with an instant server. At each
concurrency level N participants enter with their own Prolific ids and claim
a task (not timed); then, all starting together, each plays and submits its
clips: the clip's duration after playback starts, a submit carrying the
playback events and one marked word, one request per clip as the page sends
it (`--reports separate`: "play" and the end in POSTs of their own first).
Only submit requests are timed; submissions per second is accepted submits
over the wall time of that phase.

The realistic mode (`--mode realistic`): clips of 2.5-3.5 s, a participant
presses play 0.3-1 s after the clip appears and marks for 2-4 s after its end
(`--marking-seconds`), reports as the page sends them, and they arrive spread
over the first clip's time. Each level runs `--level-seconds`; it passes when
the submits' p99 is at most 200 ms with no refusal and no error. From
`--start` participants the level doubles until one fails, then bisects, while
`--budget-seconds` last; it prints the most participants served. Its
participants are asyncio coroutines on one event loop in this process, each
with its own keep-alive connection (the hammer's are threads): with a
thread each, the threads' scheduling counted in the measured latency (1,000
participants on a fresh database, one run each: submit p99 101 ms with
threads, 38 ms as coroutines; the load generator 0.14 and 0.11 cores).

Afterwards it checks the invariants in the database, measures what one
request costs in this process (PostgreSQL round trips, time, where the time
goes), and measures the ceiling: a bare psycopg loop at the same concurrency
writing the same annotation rows and counter updates, one transaction each.

granian runs one worker a core of 16 blocking threads (docker/web.sh: a request
holds its thread while it waits on PostgreSQL); gunicorn 4 workers of 4 gthread
threads (--workers, --threads,
--worker-class): part of a submit is spent waiting on PostgreSQL, so more
requests than cores must be in flight; processes run Python in parallel past
the GIL, threads overlap the round trips and keep each participant's
keep-alive connection, as a browser does. A keep-alive connection stays with
the worker that accepted it, so with 3 workers one of them often held more
participants than a core can serve while the machine had CPU to spare; 4x4
used the most of the 2 cores (3x4: 117/s, 6x2: 144/s, 8x2: 164/s, 4x4:
172/s in one run of 64 participants).

DJANGO_SETTINGS_MODULE, if set, names the settings for both this process and
gunicorn (a module that imports config.settings and changes one thing), to
measure a candidate change without editing the code.
"""

import argparse
import asyncio
import collections
import contextlib
import math
import os
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._loadgen import (  # noqa: E402  (after the path is set)
    AsyncBrowser,
    AsyncHttpTransport,
    Browser,
    CpuMeter,
    HttpTransport,
    Pace,
    ParticipantLog,
    Request,
    Steps,
    annotate,
    annotate_steps,
    enter_and_claim,
    entry_steps,
    item_page,
    percentiles,
    run_steps_async,
    server_timing,
)
from bench._pgwait import Waits, WaitSampler  # noqa: E402
from bench._probe import Probe, item_durations, probe_in_process  # noqa: E402

TARGET_RATE, TARGET_P99_MS, TARGET_FLOOR_RATIO = 300, 150, 0.5
REALISTIC_P99_MS, REALISTIC_TARGET, REALISTIC_PAGE_P99_MS = 200, 1500, 300
WORDS = [
    "she",
    "never",
    "said",
    "he",
    "stole",
    "the",
    "money",
    "yesterday",
    "but",
    "maybe",
    "someone",
    "else",
    "really",
    "did",
    "it",
]


def main() -> None:
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the clean-up below runs
    if args.mode == "realistic":
        return realistic(args)
    with (
        tempfile.TemporaryDirectory(prefix="bench-annotate-") as scratch,
        scratch_database(args.server, args.database_prefix) as db,
    ):
        setup_django(db.url, Path(scratch))
        started = time.perf_counter()
        study = make_study(args)
        print(
            f"setup: {args.clips} clips of {args.clip_seconds[0]}-{args.clip_seconds[1]} s, target "
            f"{args.target} each, {args.clips_per_task} per task, in {time.perf_counter() - started:.1f} s"
        )
        answers = {f"q{q.pk}": q.accepted[0] for q in study.prerequisites.all()}
        results = []
        with web_server(args, Path(scratch)) as server:
            print(f"{server.description}, on port {server.port}")
            meter = CpuMeter(server.pid, db.name)
            for round_number, level in enumerate(args.levels):
                tag = f"round {round_number}"
                results.append(run_level(server.port, study, answers, level, meter, tag, args.reports))
                report_level(results[-1], server.log)
        with web_server(args, Path(scratch), settings="bench._floor") as server:
            floor = framework_floor(server.port, max(args.levels), CpuMeter(server.pid, db.name), args.floor_seconds)
        probe = probe_in_process(study, answers, reports=args.reports, profile=args.profile)
        invariants = check_invariants(study, results)
        for result in results:
            result.ceiling, result.ceiling_postgres_cpu = bare_psycopg_rate(db.url, result, CpuMeter(None, db.name))
        report(results, probe, invariants, floor, args)
    if not all(ok for _, ok, _ in invariants):
        sys.exit(1)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["hammer", "realistic"], default="hammer")
    parser.add_argument(
        "--levels",
        type=_ints,
        help="hammer: concurrent participants (default 16,64); realistic: run these levels as they are, no search "
        "(to compare two builds or settings at the same load)",
    )
    parser.add_argument("--clips", type=int, help="default: 1500 (hammer), 3000 (realistic)")
    parser.add_argument("--target", type=int, help="annotations wanted per clip; default: 10 (hammer), 40 (realistic)")
    parser.add_argument("--clips-per-task", type=int, help="default: 20 (hammer), 10 (realistic)")
    parser.add_argument(
        "--clip-seconds", type=_floats, help="shortest,longest clip; default: 0.08,0.12 (hammer), 2.5,3.5 (realistic)"
    )
    parser.add_argument("--marking-seconds", type=_floats, default=(2.0, 4.0), help="realistic: after each clip")
    parser.add_argument("--start", type=int, default=250, help="realistic: participants of the first level")
    parser.add_argument("--most", type=int, default=3000, help="realistic: participants tried at most")
    parser.add_argument("--level-seconds", type=float, default=30.0, help="realistic: how long each level runs")
    parser.add_argument("--budget-seconds", type=float, default=600.0, help="realistic: the whole search")
    parser.add_argument(
        "--p99-ms",
        type=float,
        default=REALISTIC_P99_MS,
        help=f"realistic: a level passes with submit p99 at most this (the target's: {REALISTIC_P99_MS})",
    )
    parser.add_argument(
        "--wsgi",
        choices=["granian", "gunicorn"],
        default="granian",
        help="the web server: granian, as the container runs it (docker/web.sh), or gunicorn",
    )
    parser.add_argument(
        "--workers",
        type=int,
        help="web server worker processes; default: one a core (granian, as docker/web.sh), 4 (gunicorn)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="threads per worker (gthread; granian's blocking threads); default 16 (granian, as docker/web.sh), "
        "4 (gunicorn)",
    )
    parser.add_argument("--worker-class", default="gthread")
    parser.add_argument(
        "--worker-connections",
        type=int,
        default=0,
        help="keep-alive connections a worker holds at most (default: the most participants / workers, + 25 %%)",
    )
    parser.add_argument("--server", default="postgres://postgres@127.0.0.1:5432", help="PostgreSQL, no database")
    parser.add_argument(
        "--database-prefix",
        default="bench_annotate",
        help="the scratch database is named <prefix>_<this process's id> (dropped at the end)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        help="the web server's port (the empty-view floor's server takes the next one); default: any free port",
    )
    parser.add_argument(
        "--reports",
        choices=["submit", "separate"],
        default="submit",
        help="end-of-clip playback reports: with the submit (task.js, answer within a second of "
        "the end), or in a POST of their own first (task.js, a slower answer)",
    )
    parser.add_argument("--floor-seconds", type=float, default=5.0, help="how long to measure the empty-view floor")
    parser.add_argument("--profile", action="store_true", help="also print the submit's busiest lines")
    parser.add_argument(
        "--adaptive",
        choices=["fixed", "exact", "probabilistic", "reallocate", "allocate"],
        default="fixed",
        help="the study's adaptive design (Study.adaptive_mode), to measure its claims and submits",
    )
    args = parser.parse_args()
    realistic = args.mode == "realistic"
    for name, hammer, paced in (
        ("clips", 1500, 3000),
        ("target", 10, 40),
        ("clips_per_task", 20, 10),
        ("clip_seconds", (0.08, 0.12), (2.5, 3.5)),
    ):
        if getattr(args, name) is None:
            setattr(args, name, paced if realistic else hammer)
    if args.workers is None:
        # granian: one process a core served the most (docker/web.sh has the figures); gunicorn: 4 x 4
        # gthread, which bench runs found best for it (a keep-alive connection stays on its worker).
        args.workers = len(os.sched_getaffinity(0)) if args.wsgi == "granian" else 4
    if args.threads is None:
        args.threads = 16 if args.wsgi == "granian" else 4
    if args.levels is None and not realistic:
        args.levels = [16, 64]
    participants = 2 * args.most + 3 if realistic and not args.levels else sum(args.levels) + 3
    if args.clips * args.target < participants * args.clips_per_task * 1.2:
        parser.error("too few clips for the participants: raise --clips or --target")
    return args


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


def _floats(text: str) -> tuple[float, float]:
    low, high = (float(part) for part in text.split(","))
    return low, high


# --- Setup ----------------------------------------------------------------------


@dataclass
class Database:
    name: str
    url: str


@contextlib.contextmanager
def scratch_database(server: str, prefix: str = "bench_annotate"):
    """A fresh database, dropped afterwards whatever happens (connections included)."""
    import psycopg
    from psycopg import sql

    name = f"{prefix}_{os.getpid()}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield Database(name, f"{server}/{name}")
    finally:
        if "django" in sys.modules:
            from django.db import connections

            connections.close_all()
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def setup_django(database_url: str, scratch: Path) -> None:
    """Production-like settings, shared with the web server started later."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")  # another module can wrap it
    os.environ.update(
        {
            "DATABASE_URL": database_url,
            "SECRET_KEY": secrets.token_urlsafe(50),
            "DEBUG": "false",
            "ALLOWED_HOSTS": "127.0.0.1",
            "DATA_DIR": str(scratch / "data"),
            "STORAGE_BACKEND": "local",
            "LOG_LEVEL": "WARNING",
        }
    )
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def make_study(args):
    """A corpus written straight through the ORM, and a live study over all of it.

    The clips have no audio files: participants here never fetch audio (a
    browser fetches it from S3 or the audio view, which is not what this
    measures), and the task page only signs the file's name."""
    from annotation.models import Clip, Corpus, Study, Word
    from annotation.services.studies import ClipSelection, study_create, study_status_set

    rng = random.Random(0)
    corpus = Corpus.objects.create(name="annotate-load bench")
    clips = Clip.objects.bulk_create(
        Clip(
            corpus=corpus,
            external_id=f"clip-{index:05d}",
            transcript=" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))),
            language="en",
            source_path=f"audio/{index:05d}.wav",
            original_audio=f"audio/bench/{index:05d}/original.wav",
            model_audio=f"audio/bench/{index:05d}/model.wav",
            browser_audio=f"audio/bench/{index:05d}/browser.mp3",
            duration=round(rng.uniform(*args.clip_seconds), 3),
            sample_rate=16000,
            checksum=f"{index:064x}",
        )
        for index in range(args.clips)
    )
    Word.objects.bulk_create(
        (Word(clip=clip, index=i, text=text) for clip in clips for i, text in enumerate(clip.transcript.split())),
        batch_size=5000,
    )
    study = study_create(
        name="Annotate load bench",
        corpus=corpus,
        selection=ClipSelection(),
        clips_per_task=args.clips_per_task,
        target_annotations=args.target,
        attention_checks_per_task=0,
        sound_check=False,
        headphone_check=Study.HeadphoneCheck.NONE,  # the load of the task itself; the check is a few requests before it
        consent_text="A load test: nobody takes part.",
        # Only when asked: a fixed study is created exactly as before adaptive designs existed.
        **({"adaptive_mode": args.adaptive} if args.adaptive != "fixed" else {}),
    )
    return study_status_set(study=study, status=Study.Status.LIVE)


@dataclass
class Server:
    port: int
    pid: int
    log: Path
    description: str


@contextlib.contextmanager
def web_server(args, scratch: Path, settings: str | None = None):
    """gunicorn (or granian) on a free port, with the bench's settings or the named settings module."""
    port = _port_if_free(args.port + (settings is not None)) if args.port else _free_port()
    log = scratch / f"{args.wsgi}-{settings or 'app'}.log"
    environment = {**os.environ, **({"DJANGO_SETTINGS_MODULE": settings} if settings else {})}
    most = max(args.levels) if args.levels else args.most
    # The realistic mode's app says in each response where its time went (bench/_timed_wsgi.py).
    app = "bench._timed_wsgi:application" if args.mode == "realistic" and not settings else "config.wsgi:application"
    if args.wsgi == "granian":
        command = [
            sys.executable,
            "-m",
            "granian",
            "--interface",
            "wsgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(args.workers),
            "--blocking-threads",
            str(args.threads),
            "--runtime-threads",
            "1",
            "--http",
            "1",
            "--no-ws",
            "--log-level",
            "warning",
            "--backlog",
            "2048",
            app,
        ]
        description = f"granian: {args.workers} worker(s), {args.threads} blocking thread(s) each"
    else:
        command = [
            str(Path(sys.executable).with_name("gunicorn")),
            app,
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(args.workers),
            "--worker-class",
            args.worker_class,
            "--threads",
            str(args.threads),
            "--keep-alive",
            "10",
            "--worker-tmp-dir",
            "/dev/shm",
            "--log-level",
            "warning",
            "--backlog",
            "2048",
            "--worker-connections",
            str(args.worker_connections or math.ceil(1.25 * most / args.workers)),
        ]
        description = f"gunicorn: {args.workers} x {args.worker_class} worker(s), {args.threads} thread(s) each"
    with log.open("wb") as output:  # the server's and Django's own logging
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=output, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent
        )
    try:
        _wait_until_serving(port, process, log)
        yield Server(port, process.pid, log, description)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _port_if_free(port: int) -> int:
    """The port, if nothing listens on it: granian binds with SO_REUSEPORT, so a second bench on
    the same port would share the first one's participants instead of failing."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            raise RuntimeError(f"port {port} is taken ({error}): choose another with --port") from None
    return port


def _die_with_parent() -> None:
    """In the child: SIGTERM when this bench dies, even by SIGKILL (Linux prctl PR_SET_PDEATHSIG)."""
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGTERM)


START_SECONDS = 120  # a cold start of 4 workers on a busy 2-core machine took more than 30 s


def _wait_until_serving(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the web server exited with {process.returncode}:\n{log.read_text()[-2000:]}")
        try:
            transport = HttpTransport("127.0.0.1", port, timeout=2)
            transport("GET", "/s/no-such-study/ended/", None, {})  # a 404, through Django
            transport.close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the web server did not answer within {START_SECONDS} s")


# --- One concurrency level ------------------------------------------------------


@dataclass
class LevelResult:
    participants: int
    seconds: float
    logs: list[ParticipantLog]
    cores: dict[str, float]
    mean_clip_seconds: float
    ceiling: float = 0.0  # bare psycopg submissions per second, filled in later
    ceiling_postgres_cpu: float = 0.0  # PostgreSQL CPU seconds per submission in that loop
    entry_seconds: float = 0.0  # realistic mode: how long the participants took to enter (not timed otherwise)
    waits: Waits | None = None  # realistic mode: PostgreSQL's backends sampled meanwhile
    server_processes: list[float] = field(default_factory=list)  # realistic mode: cores of each web server process

    @property
    def accepted(self) -> int:
        return sum(len(log.acknowledged) for log in self.logs)

    @property
    def errors(self) -> list[str]:
        return [error for log in self.logs for error in log.errors]

    @property
    def rate(self) -> float:
        return self.accepted / self.seconds

    def latencies(self, kind: str = "submit") -> tuple[float, float, float]:
        return percentiles([s for log in self.logs for s in getattr(log, f"{kind}_seconds")])


def run_level(
    port: int, study, answers: dict[str, str], participants: int, meter: CpuMeter, tag: str, reports: str
) -> LevelResult:
    """Every participant enters and claims a task; then all annotate at once.
    `tag` seeds the participants' Prolific ids: new people in every round."""
    logs = [ParticipantLog() for _ in range(participants)]
    claimed = threading.Barrier(participants + 1, timeout=120)
    go = threading.Event()
    durations: dict[int, float] = {}

    def participant(index: int) -> None:
        rng = random.Random(f"{tag}/{index}")
        browser = Browser(HttpTransport("127.0.0.1", port))
        first = None
        try:
            first = enter_and_claim(browser, study.slug, answers, rng)
        except Exception as error:  # reported as an error of this level, not raised
            logs[index].errors.append(f"entry: {type(error).__name__}: {error}")
        claimed.wait()
        go.wait()
        try:
            if first is not None:
                annotate(browser, study.slug, first, durations, logs[index], rng, reports=reports)
        except Exception as error:
            logs[index].errors.append(f"{type(error).__name__}: {error}")
        finally:
            browser.transport.close()

    threads = [threading.Thread(target=participant, args=(index,), daemon=True) for index in range(participants)]
    for thread in threads:
        thread.start()
    claimed.wait()
    durations.update(item_durations(study))
    before, started = meter.read(), time.perf_counter()
    go.set()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    cores = CpuMeter.cores(before, meter.read(), seconds)
    played = [durations[item] for log in logs for item in log.acknowledged] or list(durations.values()) or [1.0]
    return LevelResult(participants, seconds, logs, cores, sum(played) / len(played))


def report_level(result: LevelResult, server_log: Path) -> None:
    p50, p95, p99 = result.latencies()
    refused = sum(1 for error in result.errors if error.startswith("submit 4"))
    print(
        f"{result.participants} participants: {result.accepted} submissions in {result.seconds:.2f} s = "
        f"{result.rate:.1f} submissions/s, {len(result.errors)} errors ({refused} refusals)"
        + (
            f", entry {result.entry_seconds:.1f} s"
            if result.entry_seconds
            else f" (pacing bound with an instant server: {result.participants / result.mean_clip_seconds:.0f}/s)"
        )
    )
    latencies = [f"submit latency: p50 {p50:.1f} ms, p95 {p95:.1f} ms, p99 {p99:.1f} ms"]
    for kind, name in (("event", "events POST"), ("page", "task page")):
        if any(getattr(log, f"{kind}_seconds") for log in result.logs):
            k50, _, k99 = result.latencies(kind)
            latencies.append(f"{name}: p50 {k50:.1f} ms, p99 {k99:.1f} ms")
    print("  " + "; ".join(latencies))
    cores = ", ".join(f"{name} {used:.2f}" for name, used in result.cores.items())
    print(f"  CPU, in cores of {os.cpu_count()}: {cores}")
    if result.accepted:
        per = {name: 1000 * used / result.rate for name, used in result.cores.items() if name != "other processes"}
        print(
            "  CPU per accepted submission (with its playback reports): "
            + ", ".join(f"{name} {ms:.1f} ms" for name, ms in per.items())
        )
    if result.server_processes:
        print("  web server processes, cores each: " + ", ".join(f"{used:.2f}" for used in result.server_processes))
    for kind, name in (("submit", "submit"), ("page", "task page")):
        timings = [timing for log in result.logs for timing in getattr(log, f"{kind}_timings")]
        if timings:
            print(f"  {name}: " + phases_line(timings))
    if result.waits is not None:
        print("  " + "\n  ".join(result.waits.lines()))
    if result.cores["other processes"] > 0.25:
        print("  warning: other processes used CPU meanwhile; rates and latencies are understated")
    for error in result.errors[:5]:
        print(f"  error: {error}")
    if result.errors:
        print(
            "  web server log, last lines:\n    "
            + "\n    ".join(server_log.read_text(errors="replace").splitlines()[-10:])
        )


PHASES = (
    ("outside", "outside the app (granian's queue, the network)"),
    ("python", "Python on a CPU"),
    ("database", "database calls (PostgreSQL's work and waits)"),
    ("stalled", "in the app, neither (the GIL or a core)"),
)


def phases(seconds: float, timing: dict[str, float]) -> dict[str, float]:
    """One request's milliseconds by phase, from the latency seen here and its Server-Timing
    (bench/_timed_wsgi.py). Database calls count their wall time less the driver's CPU in them, so
    the four add up to the latency; `stalled` is the app's wall time on neither: this thread was
    waiting to run (for the GIL, held by the worker's other threads, or for a core)."""
    database = timing["db"] - timing["dbcpu"]
    return {
        "outside": max(0.0, 1000 * seconds - timing["app"]),
        "python": timing["cpu"],
        "database": database,
        "stalled": max(0.0, timing["app"] - timing["cpu"] - database),
        "statements": timing["q"],
    }


def slowest_phases(result: LevelResult) -> str:
    """The submits' slowest 1 % by phase, in a few words: mean ms of each phase."""
    timings = sorted((t for log in result.logs for t in log.submit_timings), key=lambda pair: pair[0])
    if not timings:
        return ""
    tail = [phases(seconds, timing) for seconds, timing in timings[-max(1, len(timings) // 100) :]]
    short = {"outside": "outside the app", "python": "Python", "database": "database", "stalled": "stalled"}
    return ", ".join(f"{label} {sum(t[key] for t in tail) / len(tail):.0f} ms" for key, label in short.items())


def phases_line(timings: list[tuple[float, dict[str, float]]]) -> str:
    """Mean milliseconds by phase, of all requests and of the slowest 1 % (the p99's tail)."""
    ordered = sorted(timings, key=lambda pair: pair[0])
    tail = ordered[-max(1, len(ordered) // 100) :]
    means = []
    for group in (ordered, tail):
        split = [phases(seconds, timing) for seconds, timing in group]
        means.append({name: sum(request[name] for request in split) / len(split) for name in split[0]})
    parts = [f"{label} {means[0][key]:.1f} / {means[1][key]:.1f}" for key, label in PHASES]
    return (
        f"where the time went, mean ms of all {len(ordered)} / of the slowest {len(tail)}: "
        + "; ".join(parts)
        + f"; statements {means[0]['statements']:.1f}"
    )


# --- Realistic mode: the most participants served --------------------------------


def realistic(args) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="bench-annotate-") as scratch,
        scratch_database(args.server, args.database_prefix) as db,
    ):
        setup_django(db.url, Path(scratch))
        started = time.perf_counter()
        study = make_study(args)
        print(
            f"setup: {args.clips} clips of {args.clip_seconds[0]}-{args.clip_seconds[1]} s, target "
            f"{args.target} each, {args.clips_per_task} per task, in {time.perf_counter() - started:.1f} s; "
            f"marking {args.marking_seconds[0]}-{args.marking_seconds[1]} s a clip, reports: {args.reports}"
        )
        answers = {f"q{q.pk}": q.accepted[0] for q in study.prerequisites.all()}
        with web_server(args, Path(scratch)) as server:
            print(f"{server.description}, on port {server.port}")
            meter = CpuMeter(server.pid, db.name)
            best, worst, results = search(
                args, lambda n, tag: run_paced_level(server.port, study, answers, n, meter, tag, args, db), server.log
            )
        with web_server(args, Path(scratch), settings="bench._floor") as server:
            floor = framework_floor(server.port, 64, CpuMeter(server.pid, db.name), args.floor_seconds)
        invariants = check_invariants(study, results)
    passed = all(ok for _, ok, _ in invariants)
    for name, ok, detail in invariants:
        print(f"invariant: {name}: {'PASS' if ok else 'FAIL (' + detail + ')'}")
    served = next((r for r in reversed(results) if r.participants == best), None)
    print(
        f"framework floor: an empty view through the same middleware and {args.wsgi}, 64 keep-alive clients: "
        f"{floor.requests_per_second:.0f} requests/s, web server CPU {floor.cpu_ms['web server']:.2f} ms a request"
    )
    page_p99 = float("nan")
    if served is not None:
        p50, _, p99 = served.latencies()
        page_p99 = served.latencies("page")[2]
        server_ms = 1000 * served.cores["web server"] / served.rate if served.rate else float("nan")
        print(
            f"at {best} participants: {served.rate:.1f} submissions/s (the pace sets it), p50 {p50:.0f} ms "
            f"p99 {p99:.0f} ms, task page p99 {page_p99:.0f} ms; web server {server_ms:.1f} ms CPU per submit with "
            f"its share of page loads, {_ratio(server_ms, floor.cpu_ms['web server'])} x an empty request's"
        )
    # Where the time went at the edge: the fewest participants that failed, else the most served.
    edge = next((r for r in results if r.participants == worst), served)
    tail = slowest_phases(edge) if edge is not None else ""
    if edge is not None:
        print(f"where the time went at {edge.participants} participants (submits' slowest 1 %): {tail}")
    if args.p99_ms == REALISTIC_P99_MS:
        met = best >= REALISTIC_TARGET and page_p99 <= REALISTIC_PAGE_P99_MS
        print(
            f"target: at least {REALISTIC_TARGET} participants served, the task page's p99 at most "
            f"{REALISTIC_PAGE_P99_MS} ms there: {'met' if met else 'NOT met'}"
        )
    else:
        print(f"target: not judged (it is set at p99 <= {REALISTIC_P99_MS} ms, this run at {args.p99_ms:g} ms)")
    if args.levels:
        limit = f"levels {','.join(map(str, args.levels))} as asked" + (f", {worst} failed" if worst else "")
    else:
        limit = (
            f"{worst} failed" if worst else f"none failed up to {args.most}" if best >= args.most else "budget spent"
        )
    print(
        f"annotate_load realistic ({args.wsgi}, {args.adaptive}): {best} participants served with p99 <= "
        f"{args.p99_ms:g} ms and no refusals ({limit}); at {edge.participants if edge else 0} a slow submit's "
        f"time: {tail or 'n/a'}; invariants {'PASS' if passed else 'FAIL'}"
    )
    if not passed:
        sys.exit(1)


def search(args, run, server_log: Path) -> tuple[int, int | None, list[LevelResult]]:
    """Double the participants from `args.start` until a level fails, then
    bisect, while the time budget lasts. Returns (most that passed, fewest
    that failed or None, every level's result)."""
    deadline = time.monotonic() + args.budget_seconds
    best, worst, results, entry_rate = 0, None, [], 100.0
    participants = args.start
    if args.levels:  # the levels asked for, each judged, none chosen from the last
        for participants in args.levels:
            results.append(run(participants, f"level {len(results)}"))
            report_level(results[-1], server_log)
            ok = level_passes(results[-1], args.p99_ms)
            print(f"  level {'PASS' if ok else 'FAIL'} (p99 <= {args.p99_ms:g} ms, no refusals, no errors)")
            best, worst = (max(best, participants), worst) if ok else (best, min(worst or participants, participants))
        return best, worst, results
    while participants:
        if time.monotonic() + participants / entry_rate + args.level_seconds + 15 > deadline:
            print(f"time budget spent before {participants} participants")
            break
        result = run(participants, f"level {len(results)}")
        results.append(result)
        entry_rate = participants / max(result.entry_seconds, 0.1)
        report_level(result, server_log)
        ok = level_passes(result, args.p99_ms)
        print(f"  level {'PASS' if ok else 'FAIL'} (p99 <= {args.p99_ms:g} ms, no refusals, no errors)")
        best, worst = (max(best, participants), worst) if ok else (best, participants)
        if worst is None:
            participants = min(2 * participants, args.most) if participants < args.most else 0
        elif worst - best <= max(25, best // 10):
            participants = 0
        else:
            participants = (best + worst) // 2
    return best, worst, results


def level_passes(result: LevelResult, p99_ms: float) -> bool:
    return result.accepted > 0 and not result.errors and result.latencies()[2] <= p99_ms


def run_paced_level(
    port: int, study, answers: dict[str, str], participants: int, meter: CpuMeter, tag: str, args, db: Database
) -> LevelResult:
    """N participants enter and claim a task (16 at a time, not timed); then
    each opens the task page at a moment spread over the first clip's time and
    annotates at a participant's pace until the level's time is up.

    The participants are coroutines on one event loop in this process, each
    with its own keep-alive connection, entry included: not a thread each,
    whose scheduling and GIL waits would count as the server's latency."""
    logs = [ParticipantLog() for _ in range(participants)]
    entered = time.perf_counter()
    browsers = asyncio.run(_enter_all(port, study.slug, answers, tag, logs))
    entry_seconds = time.perf_counter() - entered
    durations = item_durations(study)  # the ORM, outside the event loop
    cycle = sum(args.clip_seconds) / 2 + 0.65 + sum(args.marking_seconds) / 2

    async def participant(index: int, go: asyncio.Event, until: list[float]) -> None:
        browser, rng = browsers[index], random.Random(f"{tag}/{index}/pace")
        if browser is None:
            return
        await go.wait()
        await asyncio.sleep(rng.uniform(0, cycle))  # arrivals spread over one clip's time
        try:
            pace = Pace(before_play=(0.3, 1.0), marking=args.marking_seconds, until=until[0])
            steps = _paced_steps(study.slug, durations, logs[index], rng, args.reports, pace)
            await run_steps_async(steps, browser)
        except Exception as error:
            logs[index].errors.append(f"{type(error).__name__}: {error}")
        finally:
            await browser.transport.aclose()

    async def level() -> tuple[dict, float]:
        go, until = asyncio.Event(), [0.0]
        tasks = [asyncio.create_task(participant(index, go, until)) for index in range(participants)]
        await asyncio.sleep(0)  # every participant waits for the start
        before, started = meter.read(), time.perf_counter()
        until[0] = started + args.level_seconds
        go.set()
        await asyncio.gather(*tasks)
        return before, time.perf_counter() - started

    with WaitSampler(db.url, db.name) as waits:
        before, seconds = asyncio.run(level())
    after = meter.read()
    cores = CpuMeter.cores(before, after, seconds)
    played = [durations[item] for log in logs for item in log.acknowledged] or [1.0]
    return LevelResult(
        participants,
        seconds,
        logs,
        cores,
        sum(played) / len(played),
        entry_seconds=entry_seconds,
        waits=waits,
        server_processes=CpuMeter.processes(before, after, seconds, "web server"),
    )


def _paced_steps(
    slug: str, durations: dict[int, float], log: ParticipantLog, rng: random.Random, reports: str, pace: Pace
) -> Steps:
    """Open the task page (timed), then annotate at the participant's pace."""
    sent = time.perf_counter()
    page = yield Request("GET", f"/s/{slug}/task/")
    log.page_seconds.append(time.perf_counter() - sent)
    if timing := server_timing(page.header("Server-Timing")):
        log.page_timings.append((log.page_seconds[-1], timing))
    first = item_page(page.body)
    if page.status != 200 or first is None:
        raise RuntimeError(f"task page {page.status}")
    yield from annotate_steps(slug, first, durations, log, rng, reports=reports, pace=pace)


async def _enter_all(
    port: int, slug: str, answers: dict[str, str], tag: str, logs: list[ParticipantLog]
) -> list[AsyncBrowser | None]:
    """Every participant enters and claims a task, 16 at a time; a failure is
    reported as an error of the level, not raised. Each participant's
    connection is closed afterwards: it opens its own when it starts."""
    browsers: list[AsyncBrowser | None] = [None] * len(logs)
    gate = asyncio.Semaphore(16)

    async def enter(index: int) -> None:
        browser = AsyncBrowser(AsyncHttpTransport("127.0.0.1", port))
        async with gate:
            try:
                await run_steps_async(entry_steps(slug, answers, random.Random(f"{tag}/{index}")), browser)
                browsers[index] = browser
            except Exception as error:
                logs[index].errors.append(f"entry: {type(error).__name__}: {error}")
            finally:
                await browser.transport.aclose()

    await asyncio.gather(*(enter(index) for index in range(len(logs))))
    return browsers


# --- Checks, floor and ceiling ---------------------------------------------------


@dataclass
class Floor:
    requests_per_second: float
    cpu_ms: dict[str, float]  # per request, by group of processes


def framework_floor(port: int, clients: int, meter: CpuMeter, seconds: float = 5.0) -> Floor:
    """An empty view through the app's middleware under the same web server, as
    fast as `clients` keep-alive connections can ask: what a request costs
    before any work. A clip takes one request (the submit; three with
    `--reports separate`)."""
    counts = [0] * clients
    start = threading.Barrier(clients + 1, timeout=60)
    stop = [0.0]

    def client(index: int) -> None:
        transport = HttpTransport("127.0.0.1", port)
        start.wait()
        while time.perf_counter() < stop[0]:
            transport("GET", "/bench-floor/", None, {"Host": transport.host, "Accept": "text/html"})
            counts[index] += 1
        transport.close()

    threads = [threading.Thread(target=client, args=(index,), daemon=True) for index in range(clients)]
    for thread in threads:
        thread.start()
    stop[0] = time.perf_counter() + seconds
    before, started = meter.read(), time.perf_counter()
    start.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    rate = sum(counts) / elapsed
    cores = CpuMeter.cores(before, meter.read(), elapsed)
    return Floor(rate, {name: 1000 * cores[name] / rate for name in ("web server", "load generator")})


def check_invariants(study, results: list[LevelResult]) -> list[tuple[str, bool, str]]:
    from django.db.models import Count, F, Q

    from annotation.models import Annotation, StudyItem, TaskItem

    items = StudyItem.objects.filter(study=study)
    over = items.filter(completed_count__gt=study.target_annotations).count()
    counted = items.annotate(stored=Count("taskitem__annotation", distinct=True)).filter(
        ~Q(completed_count=F("stored"))
    )
    pending = items.annotate(open=Count("taskitem", filter=Q(taskitem__status=TaskItem.Status.PENDING), distinct=True))
    reserved = pending.filter(~Q(reserved_count=F("open")))
    given = TaskItem.objects.filter(task__study=study).values("task__participant", "clip")
    twice_given = given.annotate(n=Count("pk")).filter(n__gt=1)
    done = Annotation.objects.filter(participant__study=study).values("participant", "clip")
    twice_done = done.annotate(n=Count("pk")).filter(n__gt=1)
    acknowledged = {
        item: levels for result in results for log in result.logs for item, levels in log.acknowledged.items()
    }
    stored = dict(Annotation.objects.filter(item_id__in=acknowledged).values_list("item_id", "levels"))
    missing = [item for item, levels in acknowledged.items() if stored.get(item) != levels]
    return [
        ("no clip over its target", over == 0, f"{over} over"),
        ("completed_count = stored annotations", not counted.exists(), f"{counted.count()} clips differ"),
        ("reserved_count = pending task items", not reserved.exists(), f"{reserved.count()} clips differ"),
        (
            "no participant given a clip twice",
            not twice_given.exists() and not twice_done.exists(),
            f"{twice_given.count()} given, {twice_done.count()} annotated twice",
        ),
        (
            "every acknowledged submission stored as sent",
            not missing,
            f"{len(missing)} of {len(acknowledged)} missing or different",
        ),
    ]


def bare_psycopg_rate(url: str, result: LevelResult, meter: CpuMeter) -> tuple[float, float]:
    """The same annotation rows and counter updates as the level's accepted
    submissions, written by a bare psycopg loop at the same concurrency, one
    transaction per submission, into scratch copies of the tables (with their
    indexes, checks and foreign keys). No pacing: the database's ceiling.
    Returns submissions per second and PostgreSQL CPU seconds per submission."""
    import psycopg
    from psycopg.types.string import TextLoader

    acknowledged = [item for log in result.logs for item in log.acknowledged]
    if not acknowledged:
        return 0.0, 0.0
    with psycopg.connect(url, autocommit=True) as admin:
        for json_type in ("json", "jsonb"):  # rows go back as they came: JSON stays text
            admin.adapters.register_loader(json_type, TextLoader)
        cursor = admin.execute(
            "SELECT a.*, i.study_item_id FROM annotation_annotation a JOIN annotation_taskitem i ON i.id = a.item_id"
            " WHERE a.item_id = ANY(%s)",
            [acknowledged],
        )
        names = [column.name for column in cursor.description]
        keep = [index for index, name in enumerate(names[:-1]) if name != "id"]
        rows = [([row[index] for index in keep], row[-1]) for row in cursor.fetchall()]
        admin.execute("DROP TABLE IF EXISTS bench_ceiling_annotation, bench_ceiling_item")
        admin.execute("CREATE TABLE bench_ceiling_item (LIKE annotation_studyitem INCLUDING ALL)")
        admin.execute("INSERT INTO bench_ceiling_item SELECT * FROM annotation_studyitem")
        admin.execute("UPDATE bench_ceiling_item SET completed_count = 0, reserved_count = 1000")
        admin.execute("CREATE TABLE bench_ceiling_annotation (LIKE annotation_annotation INCLUDING ALL)")
        foreign_keys = admin.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = 'annotation_annotation'::regclass AND contype = 'f'"
        ).fetchall()
        for (definition,) in foreign_keys:
            admin.execute(f"ALTER TABLE bench_ceiling_annotation ADD {definition}")
    columns = ", ".join(names[index] for index in keep)
    insert = f"INSERT INTO bench_ceiling_annotation ({columns}) VALUES ({', '.join(['%s'] * len(keep))})"
    update = (
        "UPDATE bench_ceiling_item SET completed_count = completed_count + 1, reserved_count = reserved_count - 1"
        " WHERE id = %s"
    )
    shares = [rows[index :: result.participants] for index in range(result.participants)]
    start = threading.Barrier(result.participants + 1, timeout=60)
    done = threading.Barrier(result.participants + 1, timeout=300)
    release = threading.Event()  # connections stay open until their backends' CPU is read
    failures: list[str] = []

    def writer(share: list) -> None:
        try:
            with psycopg.connect(url) as conn:
                start.wait()
                for annotation, study_item_id in share:
                    conn.execute(insert, annotation)
                    conn.execute(update, (study_item_id,))
                    conn.commit()
                done.wait()
                release.wait()
        except Exception as error:
            failures.append(f"{type(error).__name__}: {error}")
            start.abort()
            done.abort()

    threads = [threading.Thread(target=writer, args=(share,), daemon=True) for share in shares]
    for thread in threads:
        thread.start()
    try:
        start.wait()
        before, started = meter.read(), time.perf_counter()
        done.wait()
        seconds = time.perf_counter() - started
        postgres = CpuMeter.cores(before, meter.read(), seconds)["postgres"] * seconds
    except threading.BrokenBarrierError:
        pass  # a writer failed: reported below
    release.set()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"bare psycopg loop failed: {failures[0]}")
    return len(rows) / seconds, postgres / len(rows)


# --- Report --------------------------------------------------------------------


def requests_per_clip(args) -> int:
    return 1 if args.reports == "submit" else 3


def report(
    results: list[LevelResult], probe: Probe, invariants: list[tuple[str, bool, str]], floor: Floor, args
) -> None:
    submits = probe.round_trips["submit"]
    typical = sorted(submits, key=len)[len(submits) // 2]
    trips = {kind: _median([len(s) for s in lists]) for kind, lists in probe.round_trips.items()}
    orm = {kind: _median(counts) for kind, counts in probe.orm_queries.items()}
    kinds = [("submit", "submit")] + ([("events", "events POST")] if "events" in probe.cpu else [])
    print(
        "per request (median, in this process): "
        + "; ".join(
            f"{name} {orm[kind]} queries in Django's log = {trips[kind]} PostgreSQL round trips" for kind, name in kinds
        )
    )
    print("  a submit's round trips: " + "; ".join(_short(statement) for statement in typical))
    claim_wall, claim_cpu, claim_postgres = (_median(m["claim"]) for m in (probe.wall, probe.cpu, probe.postgres_cpu))
    print(
        f"  a claim (the instructions POST; {args.adaptive} design; median of {len(probe.wall['claim'])}): "
        f"{1000 * claim_wall:.1f} ms; CPU: Django {1000 * claim_cpu:.1f} ms, PostgreSQL {1000 * claim_postgres:.1f} ms; "
        f"{orm['claim']} queries in Django's log = {trips['claim']} PostgreSQL round trips"
    )
    wall, cpu, postgres = (
        {kind: _median(values) for kind, values in measured.items()}
        for measured in (probe.wall, probe.cpu, probe.postgres_cpu)
    )
    posts = len(probe.cpu.get("events", [])) / len(probe.cpu["submit"])  # events POSTs per clip
    per_clip = cpu["submit"] + postgres["submit"] + (posts * (cpu["events"] + postgres["events"]) if posts else 0)
    for kind, name in kinds:
        print(
            f"  {name} alone (medians): {1000 * wall[kind]:.1f} ms; CPU: Django {1000 * cpu[kind]:.1f} ms, "
            f"PostgreSQL {1000 * postgres[kind]:.1f} ms"
        )
    print(
        f"  so at most {os.cpu_count() / per_clip:.0f} clips/s on {os.cpu_count()} cores for Django and PostgreSQL alone"
    )
    areas = collections.Counter(area for area, _ in probe.samples)
    print(
        f"  where a submit's time goes ({len(probe.samples)} stack samples): "
        + ", ".join(f"{area} {100 * count / len(probe.samples):.0f} %" for area, count in areas.most_common())
    )
    per = requests_per_clip(args)
    floor_clips = floor.requests_per_second / per
    print(
        f"framework floor: an empty view through the same middleware and {args.wsgi}, "
        f"{max(r.participants for r in results)} keep-alive clients: {floor.requests_per_second:.0f} requests/s, "
        f"CPU per request: web server {floor.cpu_ms['web server']:.2f} ms, load generator "
        f"{floor.cpu_ms['load generator']:.2f} ms; at {per} request(s) a clip, {floor_clips:.0f} clips/s with views "
        f"that do nothing; ours {_ratio(results[-1].rate, floor_clips)} x that"
    )
    for result in results:
        print(
            f"bare psycopg at {result.participants}: {result.ceiling:.0f} submissions/s, PostgreSQL "
            f"{1000 * result.ceiling_postgres_cpu:.1f} ms CPU each; "
            f"ours {_ratio(result.rate, result.ceiling)} x that"
        )
    passed = all(ok for _, ok, _ in invariants)
    for name, ok, detail in invariants:
        print(f"invariant: {name}: {'PASS' if ok else 'FAIL (' + detail + ')'}")
    last = results[-1]
    p50, p95, p99 = last.latencies()
    errors = len(last.errors)
    server_ms = 1000 * last.cores["web server"] / last.rate if last.rate else float("nan")
    checks = {
        f">= {TARGET_RATE}/s": last.rate >= TARGET_RATE,
        f"p99 <= {TARGET_P99_MS} ms": p99 <= TARGET_P99_MS,
        "no errors": errors == 0,
        f">= {TARGET_FLOOR_RATIO} x the floor": last.rate >= TARGET_FLOOR_RATIO * floor_clips,
    }
    print(
        f"target at {last.participants} participants: "
        + ", ".join(f"{name} {'met' if ok else 'NOT met'}" for name, ok in checks.items())
    )
    print(
        f"annotate_load: {last.participants} participants ({args.wsgi}): {last.rate:.1f} submissions/s "
        f"({_ratio(last.rate, last.ceiling)} x bare psycopg, {_ratio(last.rate, floor_clips)} x "
        f"the empty-view floor per clip), p50 {p50:.0f} ms p95 {p95:.0f} ms p99 {p99:.0f} ms, web server "
        f"{server_ms:.1f} ms CPU per submit, {errors} errors; invariants {'PASS' if passed else 'FAIL'}; "
        f"claim ({args.adaptive}) {1000 * claim_wall:.1f} ms"
    )


def _ratio(ours: float, ceiling: float) -> str:
    return f"{ours / ceiling:.2f}" if ceiling else "n/a"


def _median(values: list) -> float:
    return sorted(values)[len(values) // 2]


def _short(statement: str) -> str:
    """A statement in a few words: its verb and first table; a WITH query by the writes it makes."""
    words = statement.replace('"', "").split()
    if not words:
        return "?"
    verb = words[0].upper()
    if verb == "PREPARE":
        return "PREPARE " + _short(statement.split(None, 1)[1])
    if verb == "WITH":
        writes = re.findall(r"\b(UPDATE|INSERT INTO)\s+(annotation_\w+)", statement.replace('"', ""))
        return "WITH (" + ", ".join(f"{kind.split()[0]} {table}" for kind, table in writes) + ")"
    table = next((w.split(".")[0].rstrip(",") for w in words if w.startswith("annotation_")), "")
    if verb == "SELECT" and " FOR UPDATE" in statement.upper():
        verb = "SELECT FOR UPDATE"
    return f"{verb} {table}".strip() if table else " ".join(words[:3])


if __name__ == "__main__":
    main()
