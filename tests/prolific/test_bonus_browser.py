"""The bonus batch's page in headless Chromium: the total shown, the pay button double-clicked,
the batch paid once (the fake pays again on every pay call it gets)."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from playwright.sync_api import expect

from prolific.client import ProlificClient
from prolific.services.bonuses import bonus_batch_create
from tests.annotation.factories import ParticipantFactory, StudyFactory
from tests.prolific_fake.bonuses import pays_of
from tests.prolific_fake.submissions import submission_add

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_pay_button_double_clicked_pays_once(page, live_server, settings, prolific_fake):
    settings.DEBUG = True  # static files (htmx) from the app folders
    study = StudyFactory()
    people = [ParticipantFactory(study=study) for _ in range(2)]
    for person in people:
        submission_add(
            prolific_fake,
            study_id=person.prolific_study_id,
            participant_id=person.prolific_pid,
            submission_id=person.prolific_session_id,
        )
    batch = bonus_batch_create(
        study=study,
        lines=[(p, 300) for p in people],
        reason="quality",
        client=ProlificClient.from_settings(),
    )
    User.objects.create_superuser("admin", password="secret-pass-1")
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "secret-pass-1")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}{reverse('admin:prolific_bonusbatch_change', args=[batch.pk])}")
    # 600 cents of bonuses and Prolific's third, as Prolific answers them (in cents), shown as currency.
    total = f"8.00 {study.reward_currency}"
    assert page.locator("[data-total]").inner_text() == total

    page.dblclick(f"button:has-text('Pay {total} through Prolific')")

    # The whole text: has-text is a case-insensitive substring, which "Created at Prolific, not
    # paid" (the stage before) matches already.
    expect(page.locator("[data-stage]")).to_have_text("Paid")
    assert page.locator("button:has-text('through Prolific')").count() == 0
    assert page.locator("#bonus-calls >> text=/pay/").count() == 1
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 1
    assert len(prolific_fake.calls_to("POST", r"bulk-bonus-payments/[^/]+/pay/")) == 1
