"""manage.py demo_setup: the demo corpus, the admin login and a live demo study complete in the
language it offers, whose consent states a duration computed from its clips. Run twice, it adds
nothing."""

import math

import pytest
from django.core.management import call_command

from annotation.models import Corpus, Study
from annotation.services.studies import (
    ENTRY_SECONDS,
    MARKING_SECONDS_PER_CLIP,
    PLAYS_PER_CLIP,
    study_status_refusal,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    return tmp_path


def test_the_demo_study_is_live_complete_and_states_a_duration_from_its_clips(data_dir, client, capsys):
    call_command("demo_setup")
    call_command("demo_setup")  # a second run changes nothing

    study = Study.objects.get(slug="demo")
    assert Corpus.objects.count() == 1 and Study.objects.count() == 1
    assert study.status == Study.Status.LIVE and study.interface_language == "en"
    durations = list(study.items.values_list("clip__duration", flat=True))
    assert len(durations) == study.corpus.clips.filter(language="en").count() > 0
    per_clip = PLAYS_PER_CLIP * sum(durations) / len(durations) + MARKING_SECONDS_PER_CLIP
    expected = math.ceil((ENTRY_SECONDS + study.clips_per_task * per_clip) / 60)
    assert study.estimated_minutes == expected != 15  # computed, not the model's default

    # Complete in the language it offers: going live again would be refused for nothing missing.
    study.status = Study.Status.PAUSED
    assert study_status_refusal(study=study, status=Study.Status.LIVE) == ""
    assert study.consent_text.strip() and study.instructions.strip() and study.prerequisites.count() > 0
    consent = client.get("/s/demo/", follow=True).content.decode()
    assert f"The task takes about {expected} minutes." in consent
    assert study.consent_text in consent
    assert "Admin login: user 'admin'" in capsys.readouterr().out
    assert (data_dir / "admin-credentials.txt").exists()
