"""The report page in headless Chromium: progress polls over htmx, stops, and the page shows the result."""

import os

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.selectors.study_data import annotations_fingerprint
from evaluation.forms import parameters_query
from evaluation.models import AgreementReport
from evaluation.services.agreement_reports import agreement_report_run, parameters_key, report_parameters
from tests.evaluation.builders import golden_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_progress_is_polled_until_the_report_is_ready(page, live_server, settings):
    settings.DEBUG = True  # static files (htmx) from the app folders
    study = golden_study()
    User.objects.create_superuser("admin", password="secret-pass-1")
    parameters = report_parameters(study=study, resamples=200)
    report = AgreementReport.objects.create(  # queued, as if no worker had picked it up yet
        study=study,
        parameters=parameters.as_dict(),
        parameters_key=parameters_key(parameters),
        fingerprint=annotations_fingerprint(study=study),
    )
    url = reverse("admin:evaluation_agreementreport_study", args=[study.pk])
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "secret-pass-1")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}{url}?{parameters_query(parameters)}")
    page.wait_for_selector("#report-progress >> text=waiting for a worker")

    agreement_report_run(report_id=report.pk)  # the worker runs now: the next poll answers 286 and the page reloads

    page.wait_for_selector("text=Agreement by language")
    if os.environ.get("REPORT_SCREENSHOT"):
        page.screenshot(path=os.environ["REPORT_SCREENSHOT"], full_page=True)
    assert page.locator("svg[role=img]").count() == 3
    assert page.locator("#report-progress").count() == 0
