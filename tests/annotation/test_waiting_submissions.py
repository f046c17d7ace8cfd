"""Submissions that wait on PostgreSQL do not hold other participants back: the mechanism that
capped bench/annotate_load.py's realistic capacity (issue 35).

A submit spends most of its time waiting on the database (its commit's flush, and the worker's
GIL when the answer comes back). granian runs each request in one of a worker's blocking
threads, so with docker/web.sh's former 4 threads a worker held 4 waiting submits and every
other participant's request queued behind them, while the worker's CPU sat mostly idle (the
bench: 2.7 s of a slow submit's 2.75 s spent before the app saw it, the worker at 0.26 cores).

Here the waiting is made certain rather than likely: the test holds the row lock of the clip
that WAITING participants are submitting, so each of their submits waits in PostgreSQL, and
checks, on granian as docker/web.sh runs it (one worker, its default threads), that all of them
are taken in at once and that yet another participant's page is served while they wait. WAITING
is what a worker must hold at the realistic target: at 1,500 participants each of the two
workers takes about 110 submits a second and, at the start, as many page loads; at 40-50 ms in
the app under load (the bench's Server-Timing), that is 9-10 requests in the app at once. A
check of the mechanism (who is waiting, who is served), not of a speed.
"""

import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

from tests.conftest import require_service

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench._loadgen import (  # noqa: E402  (bench/ is not a package)
    Browser,
    HttpTransport,
    ParticipantLog,
    annotate,
    enter_and_claim,
)
from bench._probe import item_durations  # noqa: E402

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
WAITING = 10


def web_threads_default() -> int:
    """The blocking threads a worker runs in the container (docker/web.sh's WEB_THREADS default)."""
    found = re.search(r"WEB_THREADS:-(\d+)", (ROOT / "docker" / "web.sh").read_text())
    assert found, "docker/web.sh names no WEB_THREADS default"
    return int(found.group(1))


def database_url() -> str:
    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("granian and the row lock need PostgreSQL")
    url = f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:{database['PORT'] or 5432}"
    require_service("PostgreSQL", url + "/postgres")
    return f"{url}/{database['NAME']}"


@pytest.fixture
def web_server(tmp_path):
    """granian as docker/web.sh runs it, one worker, on the test database; its port."""
    port = free_port()
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
        "SECRET_KEY": "waiting-submissions",
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATA_DIR": str(tmp_path / "data"),
        "LOG_LEVEL": "WARNING",
    }
    command = [sys.executable, "-m", "granian", "--interface", "wsgi", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--no-ws", "--workers", "1", "--blocking-threads", str(web_threads_default())]
    log = tmp_path / "granian.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [*command, "config.wsgi:application"], cwd=ROOT, env=environment, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        wait_until_serving(port, server, log)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_serving(port: int, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 90
    while True:
        assert server.poll() is None, log.read_text()
        try:
            transport = HttpTransport("127.0.0.1", port, timeout=5)
            transport("GET", "/s/no-such-study/ended/", None, {})
            transport.close()
            return
        except OSError:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)


def make_study(participants: int):
    """One clip of 0.3 s that every participant gets: all their submits update its row."""
    from annotation.models import Corpus, Study
    from annotation.services.studies import ClipSelection, study_create
    from tests.annotation.factories import ClipFactory

    corpus = Corpus.objects.create(name="waiting submissions")
    ClipFactory(corpus=corpus, transcript="she never said he stole the money", duration=0.3)
    return study_create(
        name="waiting submissions",
        corpus=corpus,
        selection=ClipSelection(),
        clips_per_task=1,
        target_annotations=participants,
        attention_checks_per_task=0,
        sound_check=False,
        headphone_check=Study.HeadphoneCheck.NONE,
        status=Study.Status.LIVE,
    )


def lock_waiters(url: str) -> int:
    """Backends of the test database waiting on a heavyweight lock (here: the clip's row)."""
    with psycopg.connect(url, autocommit=True) as connection:
        return connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()[0]


def test_submissions_waiting_on_the_database_leave_the_worker_free_to_serve_others(web_server):
    from annotation.models import Annotation, StudyItem

    url = database_url()
    study = make_study(WAITING + 1)
    answers = {f"q{question.pk}": question.accepted[0] for question in study.prerequisites.all()}
    browsers = [Browser(HttpTransport("127.0.0.1", web_server, timeout=60)) for _ in range(WAITING + 1)]
    firsts = [
        enter_and_claim(browser, study.slug, answers, random.Random(index)) for index, browser in enumerate(browsers)
    ]
    durations, logs = item_durations(study), [ParticipantLog() for _ in range(WAITING)]

    def submit(index: int) -> None:
        annotate(browsers[index], study.slug, firsts[index], durations, logs[index], random.Random(index))

    holder = psycopg.connect(url)  # holds the clip's row: every submit waits on it in PostgreSQL
    holder.execute("SELECT id FROM annotation_studyitem WHERE study_id = %s FOR UPDATE", [study.pk])
    submits = [threading.Thread(target=submit, args=(index,), daemon=True) for index in range(WAITING)]
    try:
        for thread in submits:
            thread.start()
        deadline = time.monotonic() + 30
        while (waiting := lock_waiters(url)) < WAITING and time.monotonic() < deadline:
            time.sleep(0.1)
        # Each submit the worker took in is waiting on the row; one it could not take in waits in
        # granian's queue, where PostgreSQL does not see it.
        assert waiting == WAITING, f"{waiting} of {WAITING} waiting submits taken in by the worker"
        other = browsers[WAITING].request("GET", f"/s/{study.slug}/task/")  # another participant's page
        assert other.status == 200 and b"data-item=" in other.body
        assert lock_waiters(url) == WAITING  # served while they still waited
    finally:
        holder.rollback()
        holder.close()
        for thread in submits:
            thread.join(timeout=60)
        for browser in browsers:
            browser.transport.close()

    assert [log.errors for log in logs] == [[]] * WAITING
    acknowledged = {item: levels for log in logs for item, levels in log.acknowledged.items()}
    assert len(acknowledged) == WAITING
    stored = dict(Annotation.objects.filter(item_id__in=acknowledged).values_list("item_id", "levels"))
    assert stored == acknowledged
    assert StudyItem.objects.get(study=study).completed_count == WAITING
