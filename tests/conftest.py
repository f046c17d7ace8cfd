import os
import shutil
import socket
from urllib.parse import urlsplit

import pytest

from config.celery import app as celery_app
from tests.audio_files import CorpusFolder
from tests.prolific_fake.fixtures import prolific_fake  # noqa: F401 (the fixture of every test that meets Prolific)

# --database-tests-only, for CI's PostgreSQL pass (tests/database_passes.py)
pytest_plugins = ["tests.database_passes"]

DEFAULT_PORTS = {"redis": 6379, "rediss": 6380, "amqp": 5672, "pyamqp": 5672, "amqps": 5671, "postgres": 5432}


def service_reachable(url: str) -> bool:
    parts = urlsplit(url)
    port = parts.port or DEFAULT_PORTS.get(parts.scheme)
    try:
        with socket.create_connection((parts.hostname, port), timeout=1):
            return True
    except OSError:
        return False


def require_service(name: str, url: str) -> None:
    """Skip when a service is missing locally; in CI a missing service is a failure."""
    if service_reachable(url):
        return
    message = f"{name} is not reachable at {url}"
    if os.environ.get("CI"):
        pytest.fail(message + " (CI must start it)")
    pytest.skip(message)


@pytest.fixture(autouse=True)
def media_storage(settings, tmp_path):
    """Every test gets its own empty local media folder."""
    media = tmp_path / "media"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(media)}},
    }
    settings.IMPORT_WORKERS = 2
    return media


@pytest.fixture(autouse=True)
def eager_celery(request):
    """Tasks run in-process unless a test asks for a real worker."""
    if request.node.get_closest_marker("worker"):
        yield
        return
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture
def corpus_folder(tmp_path) -> CorpusFolder:
    return CorpusFolder(tmp_path / "corpus")


@pytest.fixture
def demo_corpus_copy(tmp_path, settings):
    target = tmp_path / "demo_corpus"
    shutil.copytree(settings.BASE_DIR / "annotation" / "demo_corpus", target)
    return target


# --- Headless Chromium (Debian's package) driven by Playwright ----------------------

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="session")
def chromium():
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        reason = f"headless Chromium not found at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls the
    # tests make between browser steps are still synchronous and safe.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium):
    context = chromium.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


# --- DNS for webhook endpoints (annotation/public_addresses.py resolves their hosts) ----------


PUBLIC_ADDRESS = "93.184.215.14"  # a global unicast address; nothing in the tests connects to it


@pytest.fixture
def public_dns(monkeypatch):
    """Names under .example (RFC 2606) resolve to a public address; every other name as the system
    resolves it. The test machine has no DNS for names outside it."""
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if isinstance(host, str) and host.endswith(".example"):
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (PUBLIC_ADDRESS, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
