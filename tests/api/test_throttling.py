"""Signed-in callers are throttled per user at API_THROTTLE_RATE; the answer says when to retry."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from rest_framework.throttling import UserRateThrottle

from config import env
from tests.api.callers import staff_with, token_client

pytestmark = pytest.mark.django_db


def test_a_caller_over_the_rate_gets_429_json(monkeypatch):
    # DRF's throttle classes copy the rates when they are imported, so the test sets them there.
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "2/minute"})
    api = token_client(staff_with("annotation.view_study"))
    other = token_client(staff_with("annotation.view_study"))

    statuses = [api.get("/api/v1/studies/").status_code for _ in range(3)]
    refused = api.get("/api/v1/studies/")

    assert statuses == [200, 200, 429]
    assert refused.json()["detail"].startswith("Request was throttled.")
    assert int(refused["Retry-After"]) > 0
    assert other.get("/api/v1/studies/").status_code == 200  # counted per user


def test_the_rate_setting_has_a_default_and_refuses_nonsense():
    assert env.rate({}, "API_THROTTLE_RATE", "120/minute") == "120/minute"
    assert env.rate({"API_THROTTLE_RATE": "5000/day"}, "API_THROTTLE_RATE", "120/minute") == "5000/day"
    for bad in ("fast", "100", "100/fortnight", "0/minute", "-1/s"):
        with pytest.raises(ImproperlyConfigured, match="API_THROTTLE_RATE"):
            env.rate({"API_THROTTLE_RATE": bad}, "API_THROTTLE_RATE", "120/minute")
