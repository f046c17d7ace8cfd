"""The headphone check in a participant's way through a study, through the pages: the level set,
one trial a page with its answer posted and checked on the server, tries, screening out, and the
sounds behind signed links that name no answer."""

import math
import re
import time

import pytest
from django.core import signing
from django.test import override_settings

from annotation import headphone_stimuli
from annotation.headphone_links import StimulusGrant, granted_stimulus, stimulus_url
from annotation.models import HeadphoneTrial, ListeningFormItem, Participant, Study
from annotation.services.headphone_check import (
    headphone_answer,
    headphone_check_position,
    trial_seed,
    trial_target,
)
from annotation.services.listening_forms import ListeningFormItemSpec
from annotation.services.participants import next_step
from tests.annotation.study_helpers import live_form, live_study

pytestmark = pytest.mark.django_db

ONE_CHOICE = lambda clips: [  # noqa: E731
    ListeningFormItemSpec("c", ListeningFormItem.Type.SINGLE_CHOICE, clips[0], options=["x", "y"], gold=0)
]
PID = "5f0c1e2d3b4a596877665544"
PHONE = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36"
)
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"


def entered(client, study: Study, *, pid: str = PID) -> Participant:
    """Through the link, consent and the screening questions (answered as accepted)."""
    base = f"/s/{study.slug}"
    client.get(f"{base}/?PROLIFIC_PID={pid}")
    client.post(f"{base}/consent/", {"agree": "yes"})
    questions = {f"q{q.pk}": q.accepted[0] for q in study.prerequisites.all()}
    if questions:
        client.post(f"{base}/screening/", questions)
    return Participant.objects.get(study=study, prolific_pid=pid)


def shown_trial(client, study: Study) -> dict:
    page = client.get(f"/s/{study.slug}/headphones/").content.decode()
    fields = dict(re.findall(r'name="(test|attempt|trial)" value="([^"]*)"', page))
    return {"page": page, **fields, "urls": re.findall(r'<audio preload="auto" src="([^"]+)"', page)}


def answer(client, study: Study, participant: Participant, *, right: bool):
    """Post the answer to the trial the page shows, as its buttons do (1, 2 or 3)."""
    shown = shown_trial(client, study)
    participant.refresh_from_db()
    position = headphone_check_position(participant)
    assert (position.test, str(position.attempt), str(position.trial)) == (
        shown["test"],
        shown["attempt"],
        shown["trial"],
    )
    target = trial_target(participant, position)
    choice = target if right else (target + 1) % 3
    fields = {name: shown[name] for name in ("test", "attempt", "trial")}
    return client.post(f"/s/{study.slug}/headphones/", {**fields, "answer": choice + 1})


def test_new_emphasis_studies_check_with_huggins_pitch_and_forms_and_old_studies_do_not():
    assert live_study(headphone_check=Study.HeadphoneCheck.HUGGINS).headphone_check == "huggins"
    from annotation.services.studies import ClipSelection, study_create

    made = live_study(headphone_check="none")
    fresh = study_create(name="fresh", corpus=made.corpus, selection=ClipSelection())
    assert fresh.headphone_check == Study.HeadphoneCheck.HUGGINS
    assert live_form(specs=ONE_CHOICE).headphone_check == Study.HeadphoneCheck.NONE
    assert Study._meta.get_field("headphone_check").default == Study.HeadphoneCheck.NONE  # rows made before


def test_the_level_comes_first_and_5_of_6_does_not_pass_huggins_pitch(client):
    study = live_study(headphone_check=Study.HeadphoneCheck.BOTH, sound_check=False)
    base = f"/s/{study.slug}"
    participant = entered(client, study)
    assert next_step(participant) == "headphone_level"
    assert client.get(f"{base}/instructions/")["Location"] == f"{base}/headphones/level/"
    assert client.get(f"{base}/headphones/")["Location"] == f"{base}/headphones/level/"

    page = client.get(f"{base}/headphones/level/").content.decode()
    assert "/a/headphones-reference.wav" in page and "The volume is set" in page
    assert client.post(f"{base}/headphones/level/")["Location"] == f"{base}/headphones/"
    participant.refresh_from_db()
    assert participant.headphone_level_set_at is not None

    first = shown_trial(client, study)
    assert "(part 1 of 2)" in first["page"] and "Which noise held the tone?" in first["page"]
    assert "Sound 1 of 6" in first["page"] and "/a/headphones-example/1.wav" in first["page"]
    for n in range(6):
        response = answer(client, study, participant, right=n != 2)  # 5 of 6: Huggins pitch needs 6
    assert "The headphone check did not succeed" in response.content.decode()  # one try by default
    assert client.get(f"{base}/headphones/")["Location"] == f"{base}/thank-you/"
    participant.refresh_from_db()
    assert participant.screened_out and participant.headphone_check_passed is False


def test_passing_both_tests_goes_on_to_the_instructions(client):
    study = live_study(headphone_check=Study.HeadphoneCheck.BOTH)
    base = f"/s/{study.slug}"
    participant = entered(client, study)
    client.post(f"{base}/headphones/level/")
    for _ in range(6):
        answer(client, study, participant, right=True)
    antiphase = shown_trial(client, study)
    assert antiphase["test"] == "antiphase" and "(part 2 of 2)" in antiphase["page"]
    assert "Which tone was the quietest?" in antiphase["page"] and "example" not in antiphase["page"]
    for n in range(6):
        response = answer(client, study, participant, right=n != 0)  # 5 of 6 passes antiphase
    assert response["Location"] == f"{base}/instructions/"
    participant.refresh_from_db()
    assert participant.headphone_check_passed is True and not participant.screened_out
    stored = list(HeadphoneTrial.objects.filter(participant=participant).values_list("test", "attempt", "correct"))
    assert len(stored) == 12 and [c for t, _, c in stored if t == "antiphase"].count(False) == 1
    assert client.get(f"{base}/headphones/")["Location"] == f"{base}/instructions/"


def test_failing_screens_out_with_the_studys_screen_out_code_and_keeps_the_answers(client):
    study = live_study(headphone_check=Study.HeadphoneCheck.HUGGINS, headphone_check_tries=2)
    base = f"/s/{study.slug}"
    participant = entered(client, study)
    client.post(f"{base}/headphones/level/")
    for _ in range(6):
        answer(client, study, participant, right=False)
    retry = shown_trial(client, study)
    assert retry["attempt"] == "1" and retry["trial"] == "0"
    assert "That try did not succeed" in retry["page"] and "You have 1 try left." in retry["page"]
    for _ in range(5):
        answer(client, study, participant, right=True)
    page = answer(client, study, participant, right=False)  # 5 of 6 again, and 6 are needed
    text = page.content.decode()
    assert page.status_code == 200 and "The headphone check did not succeed" in text
    assert study.screen_out_code in text
    assert f"https://app.prolific.com/submissions/complete?cc={study.screen_out_code}" in text
    participant.refresh_from_db()
    assert participant.screened_out and participant.headphone_check_passed is False
    assert HeadphoneTrial.objects.filter(participant=participant).count() == 12
    assert client.get(f"{base}/headphones/")["Location"] == f"{base}/thank-you/"
    revisit = client.get(f"{base}/thank-you/").content.decode()
    assert "The headphone check did not succeed" in revisit and study.screen_out_code in revisit


def test_a_study_that_only_records_lets_those_who_fail_go_on(client):
    study = live_study(headphone_check=Study.HeadphoneCheck.ANTIPHASE, headphone_check_screens_out=False)
    base = f"/s/{study.slug}"
    participant = entered(client, study)
    client.post(f"{base}/headphones/level/")
    for _ in range(6):
        response = answer(client, study, participant, right=False)
    assert response["Location"] == f"{base}/instructions/"
    participant.refresh_from_db()
    assert participant.headphone_check_passed is False and not participant.screened_out


def test_an_answer_sent_twice_counts_once_and_an_old_page_records_nothing(client):
    study = live_study(headphone_check=Study.HeadphoneCheck.HUGGINS)
    base = f"/s/{study.slug}"
    participant = entered(client, study)
    client.post(f"{base}/headphones/level/")
    shown = shown_trial(client, study)
    fields = {name: shown[name] for name in ("test", "attempt", "trial")}
    client.post(f"{base}/headphones/", {**fields, "answer": 1})
    client.post(f"{base}/headphones/", {**fields, "answer": 2})  # the same trial again: ignored
    assert list(HeadphoneTrial.objects.values_list("trial", "answer")) == [(0, 0)]
    for bad in (
        {**fields, "answer": 4},
        {**fields, "answer": "x"},
        {**fields, "test": "beats", "trial": 1, "answer": 1},
    ):
        assert client.post(f"{base}/headphones/", bad)["Location"] == f"{base}/headphones/"
    assert HeadphoneTrial.objects.count() == 1
    assert headphone_answer(participant=participant, test="huggins", attempt=0, trial=5, answer=0) == "stale"
    with pytest.raises(ValueError):
        headphone_answer(participant=participant, test="huggins", attempt=0, trial=1, answer=3)


def test_the_page_and_its_sounds_never_tell_the_answer(client):
    study = live_study(headphone_check=Study.HeadphoneCheck.BOTH)
    base = f"/s/{study.slug}"
    participant = entered(client, study)
    client.post(f"{base}/headphones/level/")
    pages, targets = {}, set()
    for test in ("huggins", "antiphase"):
        for _ in range(6):
            shown = shown_trial(client, study)
            participant.refresh_from_db()
            targets.add(trial_target(participant, headphone_check_position(participant)))
            assert len(shown["urls"]) == 3 and len({len(url) for url in shown["urls"]}) == 1
            for interval, url in enumerate(shown["urls"]):  # each names its interval, never the target
                grant = granted_stimulus(url.removeprefix("/a/headphones/").removesuffix(".wav"))
                assert (grant.participant_id, grant.test, grant.interval) == (participant.pk, test, interval)
            bodies = []
            for url in shown["urls"]:
                response = client.get(url)
                assert response.status_code == 200 and response["Content-Type"] == "audio/wav"
                assert "no-store" in response["Cache-Control"] and "no-transform" in response["Cache-Control"]
                bodies.append(response.content)
            assert len({len(body) for body in bodies}) == 1 and len({body[:44] for body in bodies}) == 1
            # The page itself is the same whatever the target, but for the trial's own links and fields.
            page = re.sub(r'(src|value)="[^"]*"|name="csrfmiddlewaretoken"[^>]*', "", shown["page"])
            pages.setdefault(test, set()).add(re.sub(r"Sound \d of 6", "", page))
            answer(client, study, participant, right=True)
    assert len(targets) > 1 and all(len(variants) == 1 for variants in pages.values())


def test_the_seed_is_keyed_by_the_servers_secret(client):
    """Nobody holding the published code and all the participant knows (their id, even their
    access key from a resume link) can make the trial and read its target."""
    study = live_study(headphone_check=Study.HeadphoneCheck.HUGGINS)
    participant = entered(client, study)
    seed = trial_seed(participant, "huggins", 0, 0)
    assert participant.access_key not in seed and str(participant.pk) not in seed.split(":")
    with override_settings(SECRET_KEY="another server"):
        assert trial_seed(participant, "huggins", 0, 0) != seed
    assert len({trial_seed(participant, "huggins", 0, trial) for trial in range(6)}) == 6


def test_forged_expired_or_unknown_audio_links_are_refused(client):
    study = live_study(headphone_check=Study.HeadphoneCheck.HUGGINS)
    participant = entered(client, study)
    url = stimulus_url(StimulusGrant(participant.pk, "huggins", 0, 0, 1))
    assert client.get(url).status_code == 200
    assert client.get(url.replace(".wav", "x.wav")).status_code == 404
    forged = signing.dumps([participant.pk, "huggins", 0, 0, 1], salt="annotation.audio-link")
    assert client.get(f"/a/headphones/{forged}.wav").status_code == 404
    for payload in (
        [participant.pk, "beats", 0, 0, 1],
        [participant.pk, "huggins", 0, 0, 3],
        [10**9, "huggins", 0, 0, 0],
    ):
        assert client.get(stimulus_url(StimulusGrant(*payload))).status_code == 404
    with override_settings(AUDIO_URL_TTL_SECONDS=1):
        old = stimulus_url(StimulusGrant(participant.pk, "huggins", 0, 0, 1))
        time.sleep(2.1)
        assert client.get(old).status_code == 404


def test_the_reference_and_the_example_are_the_same_for_everyone(client):
    reference = client.get("/a/headphones-reference.wav")
    assert reference.status_code == 200 and reference.content == headphone_stimuli.reference_noise_wav()
    assert "public" in reference["Cache-Control"]
    example = client.get("/a/headphones-example/1.wav")
    assert example.content == headphone_stimuli.example_interval_wav(1)
    assert client.get("/a/headphones-example/3.wav").status_code == 404


def test_consent_says_a_headphone_check_follows_and_warns_phones_early(client):
    study = live_study(headphone_check=Study.HeadphoneCheck.HUGGINS)
    base = f"/s/{study.slug}"
    client.get(f"{base}/?PROLIFIC_PID={PID}")
    desktop = client.get(f"{base}/consent/", HTTP_USER_AGENT=DESKTOP).content.decode()
    assert "makes sure that you are wearing headphones or earphones. Loudspeakers, a phone" in desktop
    assert "You seem to be using a phone" not in desktop
    phone = client.get(f"{base}/consent/", HTTP_USER_AGENT=PHONE).content.decode()
    assert "You seem to be using a phone or a tablet. Its loudspeaker cannot pass the headphone check" in phone
    client.post(f"{base}/consent/", {"agree": "yes"}, HTTP_USER_AGENT=PHONE)
    client.post(f"{base}/screening/", {f"q{q.pk}": q.accepted[0] for q in study.prerequisites.all()})
    assert (
        "You seem to be using a phone"
        in client.get(f"{base}/headphones/level/", HTTP_USER_AGENT=PHONE).content.decode()
    )

    plain = live_study(headphone_check=Study.HeadphoneCheck.NONE)
    client.get(f"/s/{plain.slug}/?PROLIFIC_PID={PID}")
    page = client.get(f"/s/{plain.slug}/consent/", HTTP_USER_AGENT=PHONE).content.decode()
    assert "listening check" not in page and "You seem to be using a phone" not in page


def test_a_listening_form_study_checks_for_headphones_too(client):
    study = live_form(specs=ONE_CHOICE, headphone_check=Study.HeadphoneCheck.HUGGINS)
    base = f"/s/{study.slug}"
    participant = entered(client, study)
    assert client.get(f"{base}/instructions/")["Location"] == f"{base}/headphones/level/"
    client.post(f"{base}/headphones/level/")
    for _ in range(6):
        response = answer(client, study, participant, right=True)
    assert response["Location"] == f"{base}/instructions/"


def test_a_participant_already_in_a_task_is_not_sent_back_when_the_check_is_turned_on(client):
    study = live_study(headphone_check=Study.HeadphoneCheck.NONE)
    base = f"/s/{study.slug}"
    entered(client, study)
    client.post(f"{base}/instructions/")
    Study.objects.filter(pk=study.pk).update(headphone_check=Study.HeadphoneCheck.HUGGINS)
    assert client.get(f"{base}/task/").status_code == 200


def test_the_time_a_task_takes_includes_the_headphone_check():
    """The consent page's minutes, and a Prolific study's reward, count the check too."""
    from annotation.services.studies import ENTRY_SECONDS, headphone_check_seconds, task_minutes_estimate

    study = live_study(clips=4, clips_per_task=4, words="one two three")  # 2 s clips
    task = ENTRY_SECONDS + 4 * (2 * 2.0 + 10)
    assert headphone_check_seconds(study) == 0 and task_minutes_estimate(study) == math.ceil(task / 60) == 3
    # The level page (30 s), then 6 trials of three 1 s noises with 1 s gaps, and 3 s to answer each;
    huggins = 30 + 6 * (3 + 2 + 3)
    # antiphase: three 1 s tones with 0.5 s gaps.
    for setting, seconds in (("huggins", huggins), ("antiphase", 30 + 6 * (3 + 1 + 3)), ("both", huggins + 42)):
        Study.objects.filter(pk=study.pk).update(headphone_check=setting)
        study.refresh_from_db()
        assert headphone_check_seconds(study) == seconds
        assert task_minutes_estimate(study) == math.ceil((task + seconds) / 60)
    assert task_minutes_estimate(study) == 5


def test_a_sound_check_failure_after_a_recorded_headphone_failure_is_not_blamed_on_the_headphones(client):
    """A study that only records the check sends who fails it on to the sound check; if the sound
    check then screens them out, their thank-you page and the review page name the sound check."""
    from annotation import tones
    from annotation.selectors.review import participant_review_rows
    from annotation.services.participants import sound_check_seed

    study = live_study(
        headphone_check=Study.HeadphoneCheck.ANTIPHASE,
        headphone_check_screens_out=False,
        sound_check=True,
        sound_check_tries=1,
    )
    base = f"/s/{study.slug}"
    participant = entered(client, study)
    client.post(f"{base}/headphones/level/")
    for _ in range(6):
        response = answer(client, study, participant, right=False)
    assert response["Location"] == f"{base}/sound-check/"
    participant.refresh_from_db()
    wrong = tones.tone_count(sound_check_seed(participant)) + 1
    assert "The sound check did not succeed" in client.post(f"{base}/sound-check/", {"count": wrong}).content.decode()
    participant.refresh_from_db()
    assert participant.screened_out and participant.headphone_check_passed is False

    revisit = client.get(f"{base}/thank-you/").content.decode()
    assert study.screen_out_code in revisit and "The headphone check did not succeed" not in revisit
    status = {row.participant_id: row.status for row in participant_review_rows(study=study)}[participant.pk]
    assert status == "failed the sound check"


def test_a_setting_changed_mid_check_decides_the_check_instead_of_looping(client):
    """The study's settings can change while someone is at the check (here: both tests, then Huggins
    pitch alone, after they passed it and began the antiphase tones). Nothing is left to answer:
    the check is decided by the settings as they are now, not a page that redirects to itself."""
    study = live_study(headphone_check=Study.HeadphoneCheck.BOTH)
    base = f"/s/{study.slug}"
    participant = entered(client, study)
    client.post(f"{base}/headphones/level/")
    for _ in range(6):
        answer(client, study, participant, right=True)
    answer(client, study, participant, right=True)  # the first antiphase trial
    Study.objects.filter(pk=study.pk).update(headphone_check=Study.HeadphoneCheck.HUGGINS)

    assert client.get(f"{base}/headphones/")["Location"] == f"{base}/instructions/"
    participant.refresh_from_db()
    assert participant.headphone_check_passed is True and not participant.screened_out

    # Fewer tries than a participant has already failed: they are out of tries.
    study = live_study(headphone_check=Study.HeadphoneCheck.HUGGINS, headphone_check_tries=2)
    base = f"/s/{study.slug}"
    client.cookies.clear()
    participant = entered(client, study, pid="6a0c1e2d3b4a596877665544")
    client.post(f"{base}/headphones/level/")
    for _ in range(6):
        answer(client, study, participant, right=False)
    Study.objects.filter(pk=study.pk).update(headphone_check_tries=1)
    assert client.get(f"{base}/headphones/")["Location"] == f"{base}/thank-you/"
    participant.refresh_from_db()
    assert participant.headphone_check_passed is False and participant.screened_out
    assert "The headphone check did not succeed" in client.get(f"{base}/thank-you/").content.decode()
