import time

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotation.audio_links import signed_audio_url

pytestmark = pytest.mark.django_db

PAYLOAD = bytes(range(256)) * 40  # 10,240 bytes


@pytest.fixture
def stored():
    return default_storage.save("audio/0123456789abcdef/browser.mp3", ContentFile(PAYLOAD))


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_signed_link_serves_the_whole_file(client, stored):
    response = client.get(signed_audio_url(stored))

    assert response.status_code == 200
    assert response["Content-Type"] == "audio/mpeg"
    assert response["Accept-Ranges"] == "bytes"
    assert response["Content-Length"] == str(len(PAYLOAD))
    assert body(response) == PAYLOAD


@pytest.mark.parametrize(
    ("header", "start", "stop"),
    [
        ("bytes=0-99", 0, 100),
        ("bytes=100-", 100, len(PAYLOAD)),
        ("bytes=-10", len(PAYLOAD) - 10, len(PAYLOAD)),
        ("bytes=10000-99999", 10000, len(PAYLOAD)),
    ],
)
def test_range_requests_get_partial_content(client, stored, header, start, stop):
    response = client.get(signed_audio_url(stored), HTTP_RANGE=header)

    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes {start}-{stop - 1}/{len(PAYLOAD)}"
    assert response["Content-Length"] == str(stop - start)
    assert body(response) == PAYLOAD[start:stop]


def test_unsatisfiable_range_is_416(client, stored):
    response = client.get(signed_audio_url(stored), HTTP_RANGE="bytes=20000-")

    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{len(PAYLOAD)}"


def test_expired_link_is_refused(client, stored, monkeypatch):
    url = signed_audio_url(stored, ttl_seconds=5)
    later = time.time() + 6
    monkeypatch.setattr(time, "time", lambda: later)

    assert client.get(url).status_code == 404


def test_tampered_link_is_refused(client, stored):
    url = signed_audio_url(stored)
    token = url.rstrip("/").rsplit("/", 1)[1]
    forged = url.replace(token, token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB"))

    assert client.get(forged).status_code == 404


def test_link_for_another_file_cannot_be_made_from_a_valid_one(client, stored):
    other = default_storage.save("audio/fedcba9876543210/browser.mp3", ContentFile(b"secret"))
    url = signed_audio_url(stored)

    assert other not in url
    assert body(client.get(url)) == PAYLOAD


def test_media_is_not_served_under_a_guessable_path(client, stored):
    for guess in (f"/media/{stored}", f"/{stored}", f"/a/audio/{stored}"):
        assert client.get(guess).status_code == 404


def test_only_get_and_head_are_allowed(client, stored):
    assert client.post(signed_audio_url(stored)).status_code == 405
    assert client.head(signed_audio_url(stored)).status_code == 200
