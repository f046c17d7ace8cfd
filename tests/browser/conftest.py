"""Headless Chromium (Debian's package) driven by Playwright, against live_server."""

import os
import shutil

import pytest

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
