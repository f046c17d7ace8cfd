"""The review page in headless Chromium: a send to Prolific is polled over htmx until it finished,
then the page reloads with its outcome and the participants marked sent."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.services.review import participants_decide
from prolific.models import ProlificSendJob
from prolific.services.send import prolific_decisions_send_run
from tests.annotation.factories import ParticipantFactory, StudyFactory
from tests.prolific.test_client import prolific  # noqa: F401 (the contract fake of Prolific, a fixture)
from tests.prolific_fake.submissions import took_part

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_send_is_polled_until_it_finished(page, live_server, settings, prolific):  # noqa: F811 (fixture)
    settings.DEBUG = True  # static files (htmx) from the app folders
    study = StudyFactory()
    participant = ParticipantFactory(study=study)
    took_part(prolific, participant)
    participants_decide(participants=[participant], decision="approved")
    User.objects.create_superuser("admin", password="secret-pass-1")
    job = ProlificSendJob.objects.create(study=study)  # queued, as if no worker had picked it up yet
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "secret-pass-1")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}{reverse('admin:annotation_participant_review', args=[study.pk])}")
    page.wait_for_selector("#prolific-send >> text=waiting for a worker")

    prolific_decisions_send_run(job_id=job.pk)  # the worker runs now: the next poll answers 286 and the page reloads

    page.wait_for_selector(f"#prolific-send >> text=Sent to Prolific: {participant.prolific_pid}.")
    assert page.locator("#prolific-send[hx-get]").count() == 0
    assert page.locator("text=(sent ").count() == 1  # the row shows when its decision was sent
