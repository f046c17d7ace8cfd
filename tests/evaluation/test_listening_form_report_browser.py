"""The form scores page in headless Chromium: progress polls over htmx, stops, and the page shows the scores."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from evaluation.models import ListeningFormReport
from evaluation.selectors.listening_form_reports import listening_form_answers_fingerprint
from evaluation.services.listening_form_reports import listening_form_report_run
from tests.annotation.study_helpers import live_form
from tests.evaluation.test_listening_form_report_page import answer_every_type, every_type, take_form

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_progress_is_polled_until_the_scores_are_ready(page, live_server, settings):
    settings.DEBUG = True  # static files (htmx) from the app folders
    study = live_form(specs=every_type)
    take_form(study, answer_every_type)
    User.objects.create_superuser("admin", password="secret-pass-1")
    job = ListeningFormReport.objects.create(  # queued, as if no worker had picked it up yet
        study=study, fingerprint=listening_form_answers_fingerprint(study=study)
    )
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "secret-pass-1")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}{reverse('evaluation:listening_form_report', args=[study.pk])}")
    page.wait_for_selector("#form-report-progress >> text=waiting for a worker")

    listening_form_report_run(report_id=job.pk)  # the worker runs now: the next poll answers 286 and the page reloads

    page.wait_for_selector("h2:has-text('Single choice')")
    assert page.locator("#form-report-progress").count() == 0
    assert page.locator("svg[role=img]").count() == 1  # the accuracy chart
