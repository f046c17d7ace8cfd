"""The app served as production serves it, for browser tests (the browser fixtures are in tests/conftest.py)."""

import threading

import pytest

# --- The app as production serves it: WhiteNoise and precompressed static files ---

STATIC_STORAGE = {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"}


class ProductionServer:
    def __init__(self, thread):
        self.thread = thread

    @property
    def url(self) -> str:
        return f"http://{self.thread.host}:{self.thread.port}"

    def __str__(self) -> str:
        return self.url


@pytest.fixture(scope="session")
def collected_static(tmp_path_factory):
    """`collectstatic` once, as a deployment runs it: every file also gzipped
    (and brotli-compressed where the brotli module is installed)."""
    from django.conf import settings
    from django.core.management import call_command
    from django.test.utils import override_settings

    root = tmp_path_factory.mktemp("static_root")
    with override_settings(STATIC_ROOT=str(root), STORAGES={**settings.STORAGES, "staticfiles": STATIC_STORAGE}):
        call_command("collectstatic", "--noinput", verbosity=0)
    return root


def _server_thread_class():
    from django.core.servers.basehttp import ThreadedWSGIServer
    from django.test.testcases import LiveServerThread

    class Server(ThreadedWSGIServer):
        """Remembers its request threads (daemons, which server_close does not
        join), so that teardown can wait for the last kept-alive connection."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.request_threads = []

        def process_request_thread(self, request, client_address):
            self.request_threads.append(threading.current_thread())
            super().process_request_thread(request, client_address)

    class ServerThread(LiveServerThread):
        server_class = Server

    return ServerThread


def _as_is(app):
    return app


def _one_at_a_time(app):
    lock = threading.Lock()

    def application(environ, start_response):
        with lock:
            return app(environ, start_response)

    return application


@pytest.fixture
def production_server(transactional_db, settings, collected_static):
    """Like pytest-django's live_server, but without its static files handler
    (which serves /static/ itself, uncompressed): WhiteNoise, in MIDDLEWARE,
    serves the collected files with their precompressed variants."""
    from django.db import connections

    settings.STATIC_ROOT = str(collected_static)
    settings.STORAGES = {**settings.STORAGES, "staticfiles": STATIC_STORAGE}
    # As with DEBUG off in production; WhiteNoise reads these when the server
    # thread builds its middleware, after these overrides.
    settings.WHITENOISE_AUTOREFRESH = False
    settings.WHITENOISE_USE_FINDERS = False
    # SQLite's in-memory test database is shared with the server thread, as
    # pytest_django.live_server_helper.LiveServer does it.
    shared = {conn.alias: conn for conn in connections.all() if conn.vendor == "sqlite" and conn.is_in_memory_db()}
    # One shared connection cannot take two requests at once ("cannot start a
    # transaction within a transaction" when the page reports playback while it
    # submits), so on it requests take turns, as SQLite's writers do in production.
    serve = _one_at_a_time if shared else _as_is
    thread = _server_thread_class()("localhost", static_handler=serve, connections_override=shared)
    thread.daemon = True
    for conn in shared.values():
        conn.inc_thread_sharing()
    thread.start()
    thread.is_ready.wait()
    try:
        if thread.error:
            raise thread.error
        yield ProductionServer(thread)
    finally:
        thread.terminate()
        # The pages are closed by now; their connections' threads end at once.
        for worker in getattr(getattr(thread, "httpd", None), "request_threads", []):
            worker.join(timeout=10)
        for conn in shared.values():
            conn.dec_thread_sharing()


@pytest.fixture
def production_page_factory(chromium, production_server):
    """Pages on production_server, in fresh browser contexts (pass new_context's
    options: viewport, is_mobile...). They close before the server stops, so
    no kept-alive connection outlives it."""
    contexts = []

    def open_page(**options):
        context = chromium.new_context(base_url=production_server.url, **options)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.set_default_navigation_timeout(30_000)  # a cold browser on a busy machine
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def production_page(production_page_factory):
    return production_page_factory()
