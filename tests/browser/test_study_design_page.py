"""The study designer, clicked in headless Chromium: from the study's admin page to the plan."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from playwright.sync_api import expect

from tests.evaluation.builders import golden_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "a long secret password"


def test_a_researcher_plans_a_study_from_its_pilot(page, live_server, settings):
    settings.DEBUG = True  # the admin's static files from the app folders
    study = golden_study()
    User.objects.create_superuser("researcher", "researcher@example.com", PASSWORD)
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.get_by_label("Username").fill("researcher")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_selector("#user-tools")

    page.goto(f"{live_server.url}{reverse('admin:annotation_study_change', args=[study.pk])}")
    page.get_by_role("link", name="Plan a study").click()
    page.get_by_label("Source").select_option("pilot")
    page.get_by_label("Replicates").fill("3")
    page.get_by_label("Widest kappa interval").fill("0.5")
    page.get_by_label("Epsilon (probabilistic stopping)").fill("0.05")
    page.get_by_label("Minimum annotators (probabilistic stopping)").fill("4")
    page.get_by_role("button", name="Plan").click()

    expect(page.locator("#recommendation")).to_contain_text("annotators a clip")
    expect(page.locator("#study-design")).to_contain_text("pilot of golden")
    expect(page.locator("#study-design")).to_contain_text("Probabilistic stopping at epsilon 0.05, at least 4")
    expect(page.locator("tr.design")).to_have_count(39)  # 3 to 15 annotators, fixed, exact and probabilistic
    expect(page.locator("tr.design", has_text="probabilistic")).to_have_count(13)
    expect(page.locator("tr.recommended")).to_have_count(1)
