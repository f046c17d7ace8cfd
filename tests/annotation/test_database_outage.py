"""When the database cannot be reached, participants are asked to try again in a moment (issue 15)."""

from unittest import mock

import pytest
from django.db import InterfaceError, OperationalError

from tests.annotation.study_helpers import live_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("error", [OperationalError("could not connect to server"), InterfaceError("closed")])
def test_a_participant_page_says_to_try_again_in_a_moment(client, error):
    study = live_study()
    with mock.patch("annotation.views.participant.participant_returning", side_effect=error):
        response = client.get(f"/s/{study.slug}/", HTTP_ACCEPT_LANGUAGE="de")

    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    page = response.content.decode()
    assert "Bitte versuchen Sie es gleich noch einmal" in page and "could not connect" not in page


def test_a_submit_that_finds_no_database_is_503_too(client):
    study = live_study()
    with mock.patch("annotation.views.task.get_item_for_participant", side_effect=OperationalError("gone")):
        response = client.post(f"/s/{study.slug}/task/items/1/submit", {"levels": "1"}, HTTP_HX_REQUEST="true")

    assert response.status_code == 503 and response["Retry-After"]


def test_other_errors_are_not_taken_for_an_outage(client):
    study = live_study()
    with (
        mock.patch("annotation.views.participant.participant_returning", side_effect=ValueError("bug")),
        pytest.raises(ValueError),
    ):
        client.get(f"/s/{study.slug}/")
