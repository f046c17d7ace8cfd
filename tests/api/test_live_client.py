"""A script that knows only the API and a token, against a running server: from the list of
studies to a downloaded JSONL export of a finalized label set."""

import io
import json
import time
import urllib.request
import zipfile
from urllib.error import HTTPError

import pytest
from rest_framework.authtoken.models import Token

from tests.api.callers import staff_with
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db(transaction=True)

PERMS = (
    "annotation.view_study",
    "evaluation.add_agreementreport",
    "evaluation.view_agreementreport",
    "evaluation.add_labelset",
    "evaluation.view_labelset",
    "evaluation.change_labelset",
    "evaluation.add_datasetexport",
    "evaluation.view_datasetexport",
)


class ApiScript:
    """What a researcher's script does: JSON over HTTP with `Authorization: Token <key>`."""

    def __init__(self, base_url: str, token: str):
        self.base_url, self.token = base_url, token

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        url = path if path.startswith("http") else self.base_url + path
        request = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body else None)
        request.add_header("Authorization", f"Token {self.token}")
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"{}")
        except HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def post(self, path: str, body: dict | None = None, *, expect: int) -> dict:
        status, data = self.call("POST", path, body)
        assert status == expect, data
        return data

    def get(self, path: str) -> dict:
        status, data = self.call("GET", path)
        assert status == 200, data
        return data

    def wait(self, url: str, *, seconds: float = 60) -> dict:
        """Poll a background job until it has finished."""
        deadline = time.monotonic() + seconds
        while True:
            job = self.get(url)
            if job["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
                return job
            time.sleep(0.2)


def test_a_script_goes_from_a_study_to_a_downloaded_export(live_server):
    golden_study()
    token = Token.objects.create(user=staff_with(*PERMS))  # as manage.py drf_create_token does
    api = ApiScript(live_server.url, token.key)

    studies = api.get("/api/v1/studies/?status=draft")
    study = next(row for row in studies["results"] if row["slug"] == "golden")
    assert study["progress"]["clips"] == 12

    report = api.post("/api/v1/agreement-reports/", {"study": study["id"], "parameters": {"resamples": 20}}, expect=202)
    report = api.wait(report["url"])
    assert report["status"] == "succeeded", report["error"]
    assert report["parameters"]["subsample"] is None  # every usable annotation, not the target's 6
    assert report["result"]["agreement"]["pooled"]["clips"] == 12

    label_set = api.post(
        "/api/v1/label-sets/",
        {"name": "golden labels", "studies": [study["id"]], "parameters": {"resamples": 20}},
        expect=202,
    )
    label_set = api.wait(label_set["url"])
    assert label_set["status"] == "succeeded", label_set["error"]
    label_set = api.post(f"/api/v1/label-sets/{label_set['id']}/finalize/", expect=200)
    assert label_set["state"] == "final" and len(label_set["checksum"]) == 64
    rows = api.get(label_set["rows_url"])
    assert rows["count"] == 12 and rows["results"][0]["words"][0]["levels"]  # the 2 short clips too

    export = api.post("/api/v1/dataset-exports/", {"format": "jsonl", "label_set": label_set["id"]}, expect=202)
    export = api.wait(export["url"])
    assert export["status"] == "succeeded", export["error"]
    link = api.get(export["link_url"])

    with urllib.request.urlopen(link["url"], timeout=30) as download:  # the link needs no token
        archive = zipfile.ZipFile(io.BytesIO(download.read()))
    assert "words.jsonl" in archive.namelist()
    first_word = json.loads(archive.read("words.jsonl").splitlines()[0])
    assert first_word["clip_id"] == rows["results"][0]["clip_id"]
