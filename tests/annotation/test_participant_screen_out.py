"""participant_screen_out: a participant taken out of the study for good (e.g. consent refused)."""

import pytest

from annotation.models import Participant
from annotation.services.participants import next_step, participant_screen_out
from tests.annotation.factories import ParticipantFactory
from tests.annotation.study_helpers import live_study

pytestmark = pytest.mark.django_db


def test_a_screened_out_participant_is_sent_to_the_thank_you_page():
    participant = ParticipantFactory()
    assert next_step(participant) == "consent"

    participant_screen_out(participant=participant)

    assert participant.screened_out  # the object in hand says so too
    stored = Participant.objects.get(pk=participant.pk)
    assert stored.screened_out and next_step(stored) == "screened_out"


def test_screening_out_twice_changes_nothing_and_touches_only_that_participant():
    participant, other = ParticipantFactory(), ParticipantFactory()

    participant_screen_out(participant=participant)
    participant_screen_out(participant=participant)

    assert Participant.objects.get(pk=participant.pk).screened_out
    assert not Participant.objects.get(pk=other.pk).screened_out


def test_refusing_consent_on_the_page_screens_out(client):
    study = live_study()
    client.get(f"/s/{study.slug}/?PROLIFIC_PID={'5' * 24}")

    page = client.post(f"/s/{study.slug}/consent/", {"agree": "no"})

    assert "You did not give your consent" in page.content.decode() and study.screen_out_code in page.content.decode()
    assert Participant.objects.get(study=study).screened_out
    assert client.get(f"/s/{study.slug}/consent/")["Location"] == f"/s/{study.slug}/thank-you/"
