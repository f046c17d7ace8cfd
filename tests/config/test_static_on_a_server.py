"""A deployment on a database server serves its static files with no step of its own: granian as
docker/web.sh runs it, DATABASE_URL on PostgreSQL, DEBUG off, a fresh DATA_DIR (nobody ran
collectstatic). And the API's documentation pages load nothing from another host."""

import gzip
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import require_service

ROOT = Path(__file__).resolve().parents[2]
SERVER_DATABASE = "postgres://postgres@127.0.0.1:5432/postgres"
pytestmark = pytest.mark.postgres

STATIC_FILES = [
    "/static/admin/css/base.css",  # the admin's styles
    "/static/annotation/task.js",  # the participant page
    "/static/participant/site.css",
    "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js",  # Swagger UI
    "/static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js",  # ReDoc
]


def _database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith(("postgres://", "postgresql://")) else SERVER_DATABASE


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture(scope="module")
def granian_server(tmp_path_factory):
    """granian with docker/web.sh's interface and options, on a fresh DATA_DIR."""
    require_service("PostgreSQL", _database_url())
    data_dir = tmp_path_factory.mktemp("data")
    port = _free_port()
    env = {
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": _database_url(),
        "SECRET_KEY": "static-test",
        "DEBUG": "False",
        "DATA_DIR": str(data_dir),
    }
    log = data_dir / "granian.log"
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
        "--no-ws",
        "--workers",
        "1",
        "--blocking-threads",
        "4",
        "config.wsgi:application",
    ]
    with log.open("w") as out:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, log.read_text()
            try:
                _get(url + "/static/annotation/task.js")
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize("path", STATIC_FILES)
def test_static_files_are_served_without_collectstatic(granian_server, path):
    status, body = _get(granian_server + path)

    assert status == 200, path
    assert body == _source_file(path).read_bytes()


def test_they_are_sent_gzipped(granian_server):
    path = "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"
    request = urllib.request.Request(granian_server + path, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=10) as response:
        encoding, body = response.headers["Content-Encoding"], response.read()

    assert encoding == "gzip"
    assert gzip.decompress(body) == _source_file(path).read_bytes()
    assert len(body) < _source_file(path).stat().st_size / 2


def _source_file(path: str) -> Path:
    from django.contrib.staticfiles import finders

    return Path(finders.find(path.removeprefix("/static/")))


@pytest.mark.browser
@pytest.mark.parametrize("page_path", ["/api/docs/", "/api/redoc/"])
def test_the_api_docs_pages_render_with_nothing_from_another_host(granian_server, page, page_path):
    elsewhere, blocked, failed = [], [], []
    page.on("request", lambda request: _is_elsewhere(request.url) and elsewhere.append(request.url))
    page.on("requestfailed", lambda request: (blocked if _by_policy(request) else failed).append(request.url))
    page.on("response", lambda response: response.status >= 400 and failed.append(f"{response.status} {response.url}"))

    page.goto(granian_server + page_path)
    page.get_by_text("Emphasis platform API").first.wait_for()
    page.get_by_text("/api/v1/studies/").first.wait_for()  # the schema was read and rendered
    page.wait_for_load_state("networkidle")

    # What the page's own policy stopped in the browser never left the machine.
    assert [url for url in elsewhere if url not in blocked] == []
    assert failed == []


def _by_policy(request) -> bool:
    return request.failure == "csp"  # Chromium's blockedReason, as Playwright reports it


def _is_elsewhere(url: str) -> bool:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname != "127.0.0.1"
