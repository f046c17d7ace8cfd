"""The drill-down on the report page in headless Chromium: sorted lowest agreement first, a header
click sorts by another column, a clip's link opens its marks word by word."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.selectors.study_data import annotations_fingerprint
from evaluation.forms import parameters_query
from evaluation.models import AgreementReport
from evaluation.services.agreement_reports import agreement_report_run, parameters_key, report_parameters
from tests.evaluation.builders import golden_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _numbers(page, selector: str) -> list[float]:
    texts = page.locator(selector).all_inner_texts()
    return [float(text.split()[0]) for text in texts if text.strip() and text.split()[0] not in ("-", "undefined")]


def test_sort_the_clips_and_open_one_word_by_word(page, live_server):
    study = golden_study()
    User.objects.create_superuser("admin", password="secret-pass-1")
    parameters = report_parameters(study=study, resamples=50)
    report = AgreementReport.objects.create(
        study=study,
        parameters=parameters.as_dict(),
        parameters_key=parameters_key(parameters),
        fingerprint=annotations_fingerprint(study=study),
    )
    agreement_report_run(report_id=report.pk)
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "secret-pass-1")
    page.click("input[type=submit]")
    url = reverse("admin:evaluation_agreementreport_study", args=[study.pk])
    page.goto(f"{live_server.url}{url}?{parameters_query(parameters)}")

    page.wait_for_selector("#drilldown-clips tbody tr")
    agreement = _numbers(page, "#drilldown-clips tbody td:nth-child(4)")
    assert len(agreement) == 12 and agreement == sorted(agreement)  # lowest agreement first, short clips too
    page.click("#drilldown-clips a.sort[data-column=alpha_ordinal]")
    page.wait_for_url("**sort=alpha_ordinal**")
    page.click("#drilldown-clips a.sort[data-column=alpha_ordinal]")  # again: highest first
    page.wait_for_url("**sort=-alpha_ordinal**")
    alphas = _numbers(page, "#drilldown-clips tbody td:nth-child(5)")
    assert len(alphas) == 11 and alphas == sorted(alphas, reverse=True)  # one short clip has no alpha
    assert page.locator("#drilldown-pairs tbody tr").count() >= 1
    assert page.locator("#drilldown-positions tbody tr").count() == 8  # clips of 5 to 8 words

    first = page.locator("#drilldown-clips a.clip-link").first
    clip = first.inner_text()
    first.click()
    page.wait_for_selector("#marks")
    assert page.locator("h2 code").inner_text() == clip
    assert page.locator("#marks tbody tr").count() == 6  # every annotator of the clip
    assert page.locator("#marks tbody tr").first.locator("code").inner_text().startswith("a-")
    words = page.locator("#marks thead th.word").count()
    assert words >= 5 and page.locator("#marks tbody tr").first.locator("td[class^=level-]").count() == words
    assert page.locator("#clip-agreement").count() == 1
