"""The fixture: a fake started on a free port of 127.0.0.1, the settings pointed at it, and
retries that wait milliseconds (the waits themselves are tested in tests/prolific/test_http.py).

tests/conftest.py imports it, so that any test may ask for `prolific_fake`.
"""

import threading

import pytest

from tests.prolific_fake.server import ProlificFake


@pytest.fixture
def prolific_fake(settings):
    fake = ProlificFake()
    thread = threading.Thread(target=fake.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    settings.PROLIFIC_API_TOKEN = fake.token
    settings.PROLIFIC_API_URL = fake.url
    settings.PROLIFIC_WORKSPACE_ID = "fake-workspace"
    settings.PROLIFIC_RETRY_INITIAL_WAIT_SECONDS = 0.01
    settings.PROLIFIC_RETRY_MAX_WAIT_SECONDS = 1
    yield fake
    fake.server.shutdown()
    fake.server.server_close()
    thread.join(timeout=5)
