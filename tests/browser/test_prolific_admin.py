"""A study run on Prolific from the admin, clicked in headless Chromium against the contract fake:
proposed from the study's page, saved with a ceiling, created, published, grown from the top-ups
page, refreshed after a pause in Prolific's app, paused, resumed, its annotators put in a
participant group, and stopped, each button a background job whose outcome the page shows."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotation.models import Study
from prolific.models import ProlificStudy
from tests.annotation.factories import ParticipantFactory
from tests.browser.test_admin_actions import admin_page, open_admin  # noqa: F401 (a fixture, a helper)
from tests.prolific.test_studies import choice, english_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def click_and_see(page, button: str, outcome: str) -> None:
    page.get_by_role("button", name=button, exact=True).click()
    expect(page.locator("#prolific-outcome")).to_contain_text(outcome)


def test_a_study_is_run_on_prolific_from_the_admin(admin_page, live_server, prolific_fake):  # noqa: F811
    study = english_study()
    open_admin(admin_page, live_server, "admin:annotation_study_change", study.pk)
    admin_page.locator("#content-main").get_by_role("link", name="Prolific", exact=True).click()

    expect(admin_page.get_by_label("Estimated minutes")).to_have_value("4")  # from the clips, to accept or change
    expect(admin_page.locator("#id_reward_cents")).to_have_value("100")
    admin_page.get_by_label("Places ceiling").fill("10")
    admin_page.get_by_label("Auto grow").check()
    admin_page.get_by_role("button", name="Save and continue editing").click()
    expect(admin_page.locator(".field-cost_preview")).to_contain_text("= 14.67 GBP")

    click_and_see(admin_page, "Create the draft on Prolific", "Created on Prolific as ")
    prolific_study = ProlificStudy.objects.get(study=study)
    sent = prolific_fake.state["studies"][prolific_study.prolific_id]
    english = choice(prolific_fake, "first-language", "English")
    assert {"filter_id": "fluent-languages", "selected_values": [english]} in sent["filters"]
    assert {"filter_id": "approval_numbers", "selected_range": {"lower": 25}} in sent["filters"]

    click_and_see(admin_page, "Publish", "Publish: Prolific says Active.")
    assert Study.objects.get(pk=study.pk).status == Study.Status.LIVE

    sent["places_taken"] = 6  # all taken on Prolific, nothing delivered yet
    admin_page.get_by_role("link", name="Top-ups").click()
    expect(admin_page.locator("#prolific-grow")).to_contain_text("growing up to 10")
    admin_page.get_by_role("button", name="Grow places on Prolific").click()
    expect(admin_page.locator("#prolific-outcome")).to_contain_text("places 6 -> 10.")
    assert sent["total_available_places"] == 10

    sent["status"] = "PAUSED"  # paused in Prolific's web app
    click_and_see(admin_page, "Refresh from Prolific", "Prolific says Paused, 10 places.")
    assert Study.objects.get(pk=study.pk).status == Study.Status.PAUSED
    click_and_see(admin_page, "Resume", "Resume: Prolific says Active.")
    click_and_see(admin_page, "Pause", "Pause: Prolific says Paused.")
    click_and_see(admin_page, "Resume", "Resume: Prolific says Active.")

    ParticipantFactory(study=study, completed_at=timezone.now())
    admin_page.get_by_label("new group name").fill("wave 1 annotators")
    click_and_see(admin_page, "Add to participant group", "Sent 1 participant(s) to the group wave 1 annotators")
    click_and_see(admin_page, "Stop", "Stop: Prolific says Awaiting review.")
    assert Study.objects.get(pk=study.pk).status == Study.Status.CLOSED
    expect(admin_page.get_by_role("button", name="Publish", exact=True)).to_have_count(0)
