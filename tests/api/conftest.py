import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def fresh_throttle_counts():
    # The throttle counts requests in Django's cache, which would carry them from test to test.
    cache.clear()
    yield
    cache.clear()
