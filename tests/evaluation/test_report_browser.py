"""The report page in headless Chromium: progress polls over htmx, stops, and the page shows the result."""

import os
import shutil
import threading

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from evaluation.forms import parameters_query
from evaluation.models import StudyReport
from evaluation.selectors import annotations_fingerprint
from evaluation.services import parameters_key, report_parameters, study_report_run
from tests.evaluation.builders import golden_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def in_browser(steps, *, between):
    """Run `steps(page, pause)` in headless Chromium on its own thread (the suite's browser tests keep a
    Playwright loop running on this one); `pause()` runs `between` here, where the database is."""
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        reason = f"headless Chromium not found at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    paused, resume, failure = threading.Event(), threading.Event(), []

    def pause():
        paused.set()
        assert resume.wait(60), "the test did not resume the browser"

    def run():
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page()
                page.set_default_timeout(15_000)
                steps(page, pause)
                browser.close()
        except BaseException as error:  # reported on the test's thread
            failure.append(error)
        finally:
            paused.set()

    thread = threading.Thread(target=run)
    thread.start()
    paused.wait(90)
    if not failure:
        between()
    resume.set()
    thread.join(90)
    if failure:
        raise failure[0]


def test_progress_is_polled_until_the_report_is_ready(live_server, settings, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # another Playwright loop may run on this thread
    settings.DEBUG = True  # static files (htmx) from the app folders
    study = golden_study()
    User.objects.create_superuser("admin", password="secret-pass-1")
    parameters = report_parameters(study=study, resamples=200)
    report = StudyReport.objects.create(  # queued, as if no worker had picked it up yet
        study=study, parameters=parameters.as_dict(), parameters_key=parameters_key(parameters),
        fingerprint=annotations_fingerprint(study=study),
    )  # fmt: skip
    url = reverse("admin:evaluation_studyreport_study", args=[study.pk])
    seen = {}

    def steps(page, pause):
        page.goto(f"{live_server.url}{reverse('admin:login')}")
        page.fill("#id_username", "admin")
        page.fill("#id_password", "secret-pass-1")
        page.click("input[type=submit]")
        page.goto(f"{live_server.url}{url}?{parameters_query(parameters)}")
        page.wait_for_selector("#report-progress >> text=waiting for a worker")
        pause()  # the worker runs now: the next poll answers 286 and the page reloads
        page.wait_for_selector("text=Agreement by language")
        seen["charts"] = page.locator("svg[role=img]").count()
        seen["progress"] = page.locator("#report-progress").count()
        if os.environ.get("REPORT_SCREENSHOT"):
            page.screenshot(path=os.environ["REPORT_SCREENSHOT"], full_page=True)

    in_browser(steps, between=lambda: study_report_run(report_id=report.pk))

    assert seen == {"charts": 3, "progress": 0}
