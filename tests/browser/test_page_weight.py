"""What the annotation page costs a participant on a slow connection, before the audio.

Static files are served as in production (production_server): WhiteNoise
sends the precompressed files that `collectstatic` wrote.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.participant_helpers import study_with_audio, walk_to_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BUDGET = 50 * 1024


def is_audio(row: dict) -> bool:
    return row.get("type") == "Media" or "/a/audio/" in row["url"]


def test_annotation_page_transfers_at_most_50_kb_before_the_audio(production_page, production_server, corpus_folder):
    study = study_with_audio(corpus_folder, {"w1": "she never said he stole the money"}, name="Weight")
    base = production_server.url
    page = production_page
    walk_to_task(page, base, study)

    # A first visit: nothing cached. Chromium's own count of the bytes received
    # for each request, headers included.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.clearBrowserCache")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    rows: dict[str, dict] = {}

    def sent(event):
        rows[event["requestId"]] = {"url": event["request"]["url"], "type": event.get("type")}

    def received(event):
        headers = {name.lower(): value for name, value in event["response"]["headers"].items()}
        rows.setdefault(event["requestId"], {"url": event["response"]["url"]}).update(
            type=event["type"], status=event["response"]["status"], encoding=headers.get("content-encoding", "")
        )

    def finished(event):
        rows.setdefault(event["requestId"], {"url": ""})["wire"] = int(event["encodedDataLength"])

    cdp.on("Network.requestWillBeSent", sent)
    cdp.on("Network.responseReceived", received)
    cdp.on("Network.loadingFinished", finished)

    page.goto(f"/s/{study.slug}/task/")
    expect(page.locator(".progress")).to_contain_text("Clip 1 of 1")
    page.wait_for_load_state("networkidle")
    timing = page.evaluate("""() => performance.getEntriesByType("navigation")
        .concat(performance.getEntriesByType("resource"))
        .map(e => ({url: e.name, transfer: e.transferSize, body: e.encodedBodySize, decoded: e.decodedBodySize}))""")
    cdp.detach()

    page_rows = [row for row in rows.values() if not is_audio(row) and row["url"].startswith("http")]
    audio_rows = [row for row in rows.values() if is_audio(row)]
    body_by_url = {entry["url"]: entry for entry in timing}
    total = sum(row.get("wire", 0) for row in page_rows)
    lines = [f"\nannotation page before the audio: {total} bytes ({total / 1024:.1f} KiB) of {BUDGET // 1024} KiB"]
    for row in sorted(page_rows, key=lambda row: -row.get("wire", 0)):
        entry = body_by_url.get(row["url"], {})
        lines.append(
            f"  {row.get('wire', 0):>6} B on the wire  {entry.get('body', '?'):>6} B body"
            f"  {entry.get('decoded', '?'):>6} B decoded  {row.get('status')} {row.get('encoding') or 'identity':<8}"
            f"  {row['url'].removeprefix(base)}"
        )
    for row in audio_rows:
        lines.append(f"  (not counted: the audio, {row.get('wire', 0)} B, {row['url'].removeprefix(base)[:40]}...)")
    timed = sum(entry["transfer"] for entry in timing if "/a/audio/" not in entry["url"])
    lines.append(f"  cross-check, Resource Timing transferSize (headers estimated at 300 B each): {timed} B")
    print("\n".join(lines))

    static = [row for row in page_rows if "/static/" in row["url"]]
    assert {row["url"].removeprefix(base) for row in static} == {
        "/static/participant/site.css",
        "/static/vendor/htmx-2.0.11.min.js",
        "/static/annotation/task.js",
    }
    assert all(row["encoding"] in ("gzip", "br") for row in static), static  # as WhiteNoise serves them
    assert audio_rows, "the page did not start loading its audio"
    assert total <= BUDGET, "\n".join(lines)
