"""The participant's way through a study, page by page (Django test client)."""

import json
import re

import pytest
from django.urls import reverse

from annotation.models import AttentionCheck, Clip, Participant, PrerequisiteQuestion, Task
from tests.annotation.study_helpers import listened, live_study, marks, page_text_for_leaks

pytestmark = pytest.mark.django_db

PID, STUDY_ID, SESSION_ID = "5f0c1e2d3b4a596877665544", "6a7b8c9d0e1f2a3b4c5d6e7f", "0123456789abcdef01234567"


def prolific_link(study, pid=PID):
    return f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}"


def walk_to_task(client, study, pid=PID):
    client.get(prolific_link(study, pid))
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    answers = {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)}
    client.post(f"/s/{study.slug}/screening/", answers)
    client.post(f"/s/{study.slug}/instructions/")
    return Participant.objects.get(study=study, prolific_pid=pid)


def current_item_id(client, study) -> int:
    page = client.get(f"/s/{study.slug}/task/").content.decode()
    return int(re.search(r'data-item="(\d+)"', page).group(1))


def test_prolific_link_leads_through_consent_screening_and_instructions_to_the_task(client):
    study = live_study()
    response = client.get(prolific_link(study))
    assert response["Location"] == f"/s/{study.slug}/consent/"

    assert client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})["Location"] == f"/s/{study.slug}/screening/"
    participant = Participant.objects.get()
    assert (participant.prolific_pid, participant.prolific_study_id, participant.prolific_session_id) == (
        PID,
        STUDY_ID,
        SESSION_ID,
    )
    answers = {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)}
    assert client.post(f"/s/{study.slug}/screening/", answers)["Location"] == f"/s/{study.slug}/instructions/"
    assert client.post(f"/s/{study.slug}/instructions/")["Location"] == f"/s/{study.slug}/task/"
    page = client.get(f"/s/{study.slug}/task/").content.decode()
    assert "Clip 1 of 3" in page and 'aria-pressed="false"' in page


@pytest.mark.parametrize(
    "query",
    [
        "PROLIFIC_PID={{%PROLIFIC_PID%}}",
        "PROLIFIC_PID=abc",
        f"PROLIFIC_PID={PID}&SESSION_ID=nope",
        f"STUDY_ID={STUDY_ID}",
    ],
)
def test_malformed_ids_get_a_clear_error_page(client, query):
    study = live_study()
    response = client.get(f"/s/{study.slug}/?{query}")

    assert response.status_code == 400
    assert "This link does not work" in response.content.decode()
    assert not Participant.objects.exists()


def test_draft_and_closed_studies_turn_people_away(client):
    assert client.get(f"/s/{live_study(status='draft').slug}/").status_code == 400
    assert client.get(f"/s/{live_study(status='closed').slug}/").status_code == 410


def test_the_same_prolific_id_resumes_from_any_browser(client, django_user_model):
    from django.test import Client

    study = live_study()
    participant = walk_to_task(client, study)
    item_id = current_item_id(client, study)

    other_browser = Client()
    assert other_browser.get(prolific_link(study))["Location"] == f"/s/{study.slug}/task/"
    assert current_item_id(other_browser, study) == item_id
    assert Participant.objects.count() == 1 and Task.objects.filter(participant=participant).count() == 1


def test_local_participants_get_a_resume_link(client):
    from django.test import Client

    study = live_study()
    client.get(f"/s/{study.slug}/")
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    participant = Participant.objects.get()
    assert participant.prolific_pid == ""
    page = client.get(f"/s/{study.slug}/screening/").content.decode()
    resume = reverse("annotation:resume", args=[study.slug, participant.access_key])
    assert resume in page

    assert Client().get(resume)["Location"] == f"/s/{study.slug}/screening/"


def test_visits_before_consent_create_no_participant(client):
    from django.test import Client

    study = live_study()
    for _ in range(3):
        assert Client().get(f"/s/{study.slug}/")["Location"] == f"/s/{study.slug}/consent/"
    Client().get(prolific_link(study))
    visitor = Client()
    visitor.get(f"/s/{study.slug}/")
    assert "I agree and want to take part" in visitor.get(f"/s/{study.slug}/consent/").content.decode()
    assert not Participant.objects.exists()

    visitor.post(f"/s/{study.slug}/consent/", {"agree": "yes"})

    assert Participant.objects.get().consented_at is not None


@pytest.mark.parametrize("link", ["local", "prolific"])
def test_opening_the_study_link_again_mid_task_resumes_the_same_participant(client, link):
    study = live_study()
    url = prolific_link(study) if link == "prolific" else f"/s/{study.slug}/"
    client.get(url)
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    answers = {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)}
    client.post(f"/s/{study.slug}/screening/", answers)
    client.post(f"/s/{study.slug}/instructions/")
    item_id = current_item_id(client, study)

    assert client.get(url)["Location"] == f"/s/{study.slug}/task/"
    assert current_item_id(client, study) == item_id
    assert Participant.objects.count() == 1


def test_not_qualifying_shows_a_polite_page_with_the_screen_out_code(client):
    study = live_study()
    client.get(prolific_link(study))
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    answers = {f"q{q.pk}": q.choices[-1] for q in PrerequisiteQuestion.objects.filter(study=study)}

    page = client.post(f"/s/{study.slug}/screening/", answers).content.decode()

    assert "This study is for a different group of people" in page
    assert study.screen_out_code in page and f"cc={study.screen_out_code}" in page
    assert client.get(f"/s/{study.slug}/instructions/")["Location"] == f"/s/{study.slug}/thank-you/"


def test_declining_consent_ends_the_study_politely(client):
    study = live_study()
    client.get(prolific_link(study))

    page = client.post(f"/s/{study.slug}/consent/", {"agree": "no"}).content.decode()

    assert "You did not give your consent" in page and Participant.objects.get().screened_out


def test_sound_check_with_a_fixed_number_of_tries(client):
    from annotation import tones
    from annotation.services.participants import sound_check_seed

    study = live_study(sound_check=True, sound_check_tries=2)
    client.get(prolific_link(study))
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    answers = {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)}
    assert client.post(f"/s/{study.slug}/screening/", answers)["Location"] == f"/s/{study.slug}/sound-check/"
    audio = client.get(f"/s/{study.slug}/sound-check/audio.wav")
    assert audio["Content-Type"] == "audio/wav" and audio.content[:4] == b"RIFF"

    participant = Participant.objects.get()
    right = tones.tone_count(sound_check_seed(participant))
    wrong = client.post(f"/s/{study.slug}/sound-check/", {"count": right + 1}).content.decode()
    assert "That was not right" in wrong and "You have 1 try left." in wrong
    participant.refresh_from_db()
    right = tones.tone_count(sound_check_seed(participant))
    assert (
        client.post(f"/s/{study.slug}/sound-check/", {"count": right})["Location"] == f"/s/{study.slug}/instructions/"
    )


def test_failing_every_sound_check_try_screens_out(client):
    from annotation import tones
    from annotation.services.participants import sound_check_seed

    study = live_study(sound_check=True, sound_check_tries=1)
    client.get(prolific_link(study))
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    answers = {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)}
    client.post(f"/s/{study.slug}/screening/", answers)
    wrong = tones.tone_count(sound_check_seed(Participant.objects.get())) + 1

    page = client.post(f"/s/{study.slug}/sound-check/", {"count": wrong}).content.decode()

    assert "The sound check did not succeed" in page and study.screen_out_code in page


def test_pages_need_the_participant_cookie(client):
    study = live_study()
    response = client.get(f"/s/{study.slug}/task/")
    assert response.status_code == 403 and "Please use your study link" in response.content.decode()


def test_submitting_through_the_page_until_the_completion_redirect(client):
    study = live_study(clips=3, clips_per_task=3)
    participant = walk_to_task(client, study)
    for number in (1, 2, 3):
        item_id = current_item_id(client, study)
        item = participant.tasks.get().items.get(pk=item_id)
        listened(item)
        response = client.post(
            f"/s/{study.slug}/task/items/{item_id}/submit",
            {"levels": ",".join(map(str, marks(item, 0))), "events": "[]"},
            HTTP_HX_REQUEST="true",
        )
        assert response.status_code == 200
        if number < 3:
            assert f"Clip {number + 1} of 3" in response.content.decode()

    assert response["HX-Redirect"] == f"/s/{study.slug}/done/"
    page = client.get(f"/s/{study.slug}/done/").content.decode()
    assert study.completion_code in page
    assert f"https://app.prolific.com/submissions/complete?cc={study.completion_code}" in page


def test_gate_failure_is_shown_in_the_page_and_nothing_is_stored(client):
    study = live_study()
    walk_to_task(client, study)
    item_id = current_item_id(client, study)

    response = client.post(
        f"/s/{study.slug}/task/items/{item_id}/submit",
        {"levels": ",".join(["0"] * 10), "events": "[]"},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 422 and response["HX-Retarget"] == "#gate-errors"
    text = response.content.decode()
    assert "Mark at least 1 word as emphasized" in text and "Listen to the whole clip first" in text


def test_events_endpoint_records_playback(client):
    study = live_study()
    participant = walk_to_task(client, study)
    item_id = current_item_id(client, study)
    events = [{"kind": "play", "t": 0, "rate": 1, "at": 10.5}, {"kind": "timeupdate", "t": 0.25, "rate": 1, "at": 260}]

    response = client.post(
        f"/s/{study.slug}/task/items/{item_id}/events", json.dumps(events), content_type="application/json"
    )

    assert response.status_code == 204
    assert participant.tasks.get().items.get(pk=item_id).playback_events.count() == 2
    bad = client.post(f"/s/{study.slug}/task/items/{item_id}/events", "{", content_type="application/json")
    assert bad.status_code == 400


def test_another_participants_item_is_404_and_reveals_nothing(client):
    from django.test import Client

    study = live_study(target_annotations=5)
    walk_to_task(client, study)
    intruder = Client()
    walk_to_task(intruder, study, pid="a" * 24)
    victim_item = current_item_id(client, study)

    for url in (f"/s/{study.slug}/task/items/{victim_item}/submit", f"/s/{study.slug}/task/items/{victim_item}/events"):
        response = intruder.post(url, {"levels": "1,0,0,0,0,0,0,0,0,0"})
        assert response.status_code == 404


def test_attention_check_answers_never_reach_the_participant(client):
    study = live_study(clips=4, clips_per_task=2, attention_checks_per_task=1)
    check_clip = Clip.objects.filter(corpus=study.corpus).last()
    AttentionCheck.objects.create(study=study, clip=check_clip, expected={"7": 2})
    participant = walk_to_task(client, study)
    seen = []
    for _ in range(3):
        page = client.get(f"/s/{study.slug}/task/")
        seen.append(page.content.decode())
        item_id = current_item_id(client, study)
        item = participant.tasks.get().items.get(pk=item_id)
        listened(item)
        response = client.post(
            f"/s/{study.slug}/task/items/{item_id}/submit",
            {"levels": ",".join(map(str, marks(item, 1))), "events": "[]"},
            HTTP_HX_REQUEST="true",
        )
        seen.append(response.content.decode() + json.dumps(dict(response.headers)))
    seen.append(client.get(f"/s/{study.slug}/done/").content.decode())

    everything = page_text_for_leaks("\n".join(seen))
    assert participant.tasks.get().items.filter(attention_check__isnull=False).count() == 1
    for leak in ('"7": 2', "expected", "attention", "gold"):
        assert leak not in everything


@pytest.mark.parametrize("name", ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"])
def test_an_id_with_a_trailing_newline_is_refused(client, name):
    study = live_study()
    ids = {"PROLIFIC_PID": PID, "STUDY_ID": STUDY_ID, "SESSION_ID": SESSION_ID}
    ids[name] += "\n"

    response = client.get(f"/s/{study.slug}/", ids)

    assert response.status_code == 400
    assert not Participant.objects.exists()
