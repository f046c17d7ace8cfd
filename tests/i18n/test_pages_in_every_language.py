"""Every participant page, in every shipped interface language: it renders,
and what it shows is the study's language, not English."""

import re

import pytest
from django.conf import settings
from django.utils import translation
from django.utils.html import escape

from annotation import tones
from annotation.models import ListeningFormItem, Participant, PrerequisiteQuestion, Study
from annotation.services.listening_forms import ListeningFormItemSpec
from annotation.services.participants import sound_check_seed
from tests.annotation.study_helpers import listened, live_form, live_study, marks

pytestmark = pytest.mark.django_db

SHIPPED = [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
PID = "5f0c1e2d3b4a596877665544"


class Expect:
    """The English text of a message and its translation into one language."""

    def __init__(self, language: str):
        self.language = language

    def __call__(self, msgid: str, **params) -> tuple[str, str]:
        with translation.override(self.language):
            translated = translation.gettext(msgid)
        return msgid % params if params else msgid, translated % params if params else translated

    def plural(self, singular: str, plural: str, n: int, **params) -> tuple[str, str]:
        params = {**params}
        english = (singular if n == 1 else plural) % params
        with translation.override(self.language):
            return english, translation.ngettext(singular, plural, n) % params


def shows(page: str, text: str) -> bool:
    # {% translate %} and {{ variables }} are escaped; the text of {% blocktranslate %} is not.
    return escape(text) in page or text in page


def assert_in_language(response, expected: list[tuple[str, str]], *, status: int = 200):
    page = response.content.decode()
    assert response.status_code == status, page[:500]
    missing = [translated for _, translated in expected if not shows(page, translated)]
    assert not missing, f"not on the page: {missing}"
    assert any(english != translated for english, translated in expected), "nothing on the page differs from English"
    english_left = [
        english
        for english, translated in expected
        if english != translated and english not in translated and shows(page, english)
    ]
    assert not english_left, f"English still on the page: {english_left}"
    return page


def answers(study: Study) -> dict:
    return {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)}


@pytest.mark.parametrize("language", SHIPPED)
def test_the_way_through_an_emphasis_study(client, language):
    t = Expect(language)
    study = live_study(clips=2, clips_per_task=1, interface_language=language, sound_check=True, sound_check_tries=2)
    base = f"/s/{study.slug}"

    assert client.get(f"{base}/?PROLIFIC_PID={PID}")["Location"] == f"{base}/consent/"
    page = assert_in_language(
        client.get(f"{base}/consent/"),
        [
            t("Consent"),
            t("I agree and want to take part"),
            t("I do not agree"),
            t(
                "The task takes about %(minutes)s minutes. Please use headphones in a quiet place.",
                minutes=study.estimated_minutes,
            ),
        ],
    )
    rtl = translation.get_language_info(language)["bidi"]
    assert f'<html lang="{language}" dir="{"rtl" if rtl else "ltr"}">' in page

    client.post(f"{base}/consent/", {"agree": "yes"})
    assert_in_language(client.get(f"{base}/screening/"), [t("A few questions first"), t("Continue")])

    assert client.post(f"{base}/screening/", answers(study))["Location"] == f"{base}/sound-check/"
    assert_in_language(
        client.get(f"{base}/sound-check/"),
        [
            t("Sound check"),
            t("Play the clip and count the tones you hear."),
            t("How many tones did you hear?"),
            t("Check"),
            t.plural("You have %(tries)s try left.", "You have %(tries)s tries left.", 2, tries=2),
        ],
    )
    participant = Participant.objects.get(study=study)
    wrong = tones.tone_count(sound_check_seed(participant)) + 1
    assert_in_language(
        client.post(f"{base}/sound-check/", {"count": wrong}),
        [
            t("That was not right. Listen to the new clip and try again."),
            t.plural("You have %(tries)s try left.", "You have %(tries)s tries left.", 1, tries=1),
        ],
    )
    assert_in_language(
        client.post(f"{base}/sound-check/", {"count": "many"}), [t("Please type the number of tones as a number.")]
    )
    participant.refresh_from_db()
    right = tones.tone_count(sound_check_seed(participant))
    assert client.post(f"{base}/sound-check/", {"count": right})["Location"] == f"{base}/instructions/"

    assert_in_language(
        client.get(f"{base}/instructions/"),
        [
            t("Instructions"),
            t("How to mark words"),
            t("Levels"),
            t("heavily emphasized"),
            t("Start"),
        ],
    )
    assert client.post(f"{base}/instructions/")["Location"] == f"{base}/task/"

    page = assert_in_language(
        client.get(f"{base}/task/"),
        [
            t("Clip %(number)s of %(total)s", number=1, total=1),
            t.plural(
                "Mark %(fewest)d to %(most)d word the speaker emphasized.",
                "Mark %(fewest)d to %(most)d words the speaker emphasized.",
                3,
                fewest=1,
                most=3,
            ),
            t("Words of the transcript"),
            t("The audio does not match the text"),
            t("Listen to the whole clip to continue."),
            t.plural("Mark at least %(counter)s word.", "Mark at least %(counter)s words.", 1, counter=1),
            t("Submit and continue"),
        ],
    )
    item_id = int(re.search(r'data-item="(\d+)"', page).group(1))
    item = participant.tasks.get().items.get(pk=item_id)

    refused = client.post(
        f"{base}/task/items/{item_id}/submit", {"levels": ",".join(["0"] * item.word_count)}, HTTP_HX_REQUEST="true"
    )
    assert_in_language(
        refused,
        [
            t.plural(
                "Mark at least %(count)d word as emphasized.",
                "Mark at least %(count)d words as emphasized.",
                1,
                count=1,
            ),
            t("Listen to %(which)s first (played so far: %(played)d %%).", which=t("the whole clip")[1], played=0),
        ],
        status=422,
    )

    listened(item)
    done = client.post(
        f"{base}/task/items/{item_id}/submit", {"levels": ",".join(map(str, marks(item, 0)))}, HTTP_HX_REQUEST="true"
    )
    assert done["HX-Redirect"] == f"{base}/done/"
    assert_in_language(
        client.get(f"{base}/done/"),
        [
            t("Thank you!"),
            t("You have finished the task."),
            t("Your completion code:"),
            t("You will be taken back to Prolific in a few seconds."),
            t("Return to Prolific now"),
        ],
    )


@pytest.mark.parametrize("language", SHIPPED)
def test_the_pages_that_turn_people_away(client, language):
    t = Expect(language)
    study = live_study(interface_language=language)
    base = f"/s/{study.slug}"

    assert_in_language(
        client.get(f"{base}/task/"),
        [
            t("Please use your study link"),
            t("We could not find your place in this study. Open the link you were given again."),
        ],
        status=403,
    )
    assert_in_language(
        client.get(f"{base}/?STUDY_ID=6a7b8c9d0e1f2a3b4c5d6e7f"),
        [
            t("This link does not work"),
            t("The link has STUDY_ID or SESSION_ID but no PROLIFIC_PID."),
        ],
        status=400,
    )

    client.get(f"{base}/?PROLIFIC_PID={PID}")
    assert_in_language(
        client.post(f"{base}/consent/", {"agree": "no"}),
        [
            t("Thank you for your time"),
            t("You did not give your consent, so you cannot take part."),
            t("Your code:"),
            t("Return to Prolific"),
        ],
    )

    closed = live_study(interface_language=language, status=Study.Status.CLOSED)
    assert_in_language(
        client.get(f"/s/{closed.slug}/"),
        [
            t("This study is closed"),
            t("Thank you for your interest."),
        ],
        status=410,
    )
    draft = live_study(interface_language=language, status=Study.Status.DRAFT)
    assert_in_language(
        client.get(f"/s/{draft.slug}/"),
        [
            t("This link does not work"),
            t("This study has not started yet."),
        ],
        status=400,
    )


@pytest.mark.parametrize("language", SHIPPED)
def test_a_listening_form_page(client, language):
    t = Expect(language)

    def pairwise(clips):
        return [
            ListeningFormItemSpec(
                "pair", ListeningFormItem.Type.PAIRWISE, clips[0], second_clip=clips[1], settings={"allow_tie": True}
            )
        ]

    study = live_form(specs=pairwise, clips=2, interface_language=language, instructions="Listen well.")
    base = f"/s/{study.slug}"
    client.get(f"{base}/?PROLIFIC_PID={PID}")
    client.post(f"{base}/consent/", {"agree": "yes"})
    client.post(f"{base}/screening/", answers(study))
    client.post(f"{base}/instructions/")

    page = assert_in_language(
        client.get(f"{base}/task/"),
        [
            t("Item %(number)s of %(total)s", number=1, total=1),
            t("Which version is better?"),
            t("The first clip"),
            t("The second clip"),
            t("No preference"),
            t("First clip"),
            t("Second clip"),
            t("Listen to every clip to the end to continue."),
            t("Submit and continue"),
            t("Instructions"),
        ],
    )
    item_id = int(re.search(r'data-item="(\d+)"', page).group(1))
    refused = client.post(f"{base}/task/items/{item_id}/submit", {"prefer": "a"}, HTTP_HX_REQUEST="true")
    assert_in_language(
        refused,
        [
            t("Listen to %(which)s first (played so far: %(played)d %%).", which=t("the first clip")[1], played=0),
            t("Listen to %(which)s first (played so far: %(played)d %%).", which=t("the second clip")[1], played=0),
        ],
        status=422,
    )


def _headphone_answer(client, base: str, participant: Participant, *, right: bool):
    """Answer the trial the page shows with the interval a headphone listener would pick (or another)."""
    from annotation.services.headphone_check import headphone_check_position, trial_target

    participant.refresh_from_db()
    position = headphone_check_position(participant)
    target = trial_target(participant, position)
    fields = {"test": position.test, "attempt": position.attempt, "trial": position.trial}
    return client.post(f"{base}/headphones/", {**fields, "answer": (target if right else (target + 1) % 3) + 1})


@pytest.mark.parametrize("language", SHIPPED)
def test_the_headphone_check(client, language):
    t = Expect(language)
    study = live_study(
        interface_language=language,
        headphone_check=Study.HeadphoneCheck.BOTH,
        headphone_check_trials=2,
        huggins_pass_mark=2,
        antiphase_pass_mark=2,
        headphone_check_tries=2,
    )
    base = f"/s/{study.slug}"
    phone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1"
    client.get(f"{base}/?PROLIFIC_PID={PID}")
    warning = t(
        "You seem to be using a phone or a tablet. Its loudspeaker cannot pass the headphone check: plug in headphones "
        "or earphones before you go on."
    )
    notice = t(
        "Before the task, a short listening check makes sure that you are wearing headphones or earphones. "
        "Loudspeakers, a phone's included, cannot pass it."
    )
    assert_in_language(client.get(f"{base}/consent/", HTTP_USER_AGENT=phone), [t("Consent"), notice, warning])
    client.post(f"{base}/consent/", {"agree": "yes"})
    assert client.post(f"{base}/screening/", answers(study))["Location"] == f"{base}/headphones/level/"

    assert_in_language(
        client.get(f"{base}/headphones/level/", HTTP_USER_AGENT=phone),
        [
            t("Set your volume"),
            warning,
            t(
                "Next comes a short listening check that only works with headphones or earphones. Put them on "
                "(both sides) and sit somewhere quiet."
            ),
            t("Turn your volume down to about a quarter."),
            t("Play the noise below and turn the volume up until the noise is loud but comfortable."),
            t("Then leave the volume as it is until the end of the study."),
            t("The volume is set"),
            t("This check needs JavaScript to play its sounds."),
        ],
    )
    assert client.post(f"{base}/headphones/level/")["Location"] == f"{base}/headphones/"
    participant = Participant.objects.get(study=study)
    huggins = [
        t("Headphone check"),
        t("(part %(number)s of %(total)s)", number=1, total=2),
        t(
            "You will hear three noises, one after another. One of them hides a faint tone. Which noise holds the "
            "tone: 1, 2 or 3?"
        ),
        t("Hear an example"),
        t("In this example the tone is in noise %(answer)s. Play it as often as you like.", answer=2),
        t("Play the example"),
        t("Each sound can be played only once, so press Play when you are ready to listen."),
        t("Sound %(number)s of %(total)s", number=1, total=2),
        t("Play"),
        t("The sound could not be played. Check that this page may play sound, then press Play again."),
        t("The sounds could not be loaded. Reload the page to try again."),
        t("Which noise held the tone?"),
        t.plural("You have %(tries)s try left.", "You have %(tries)s tries left.", 2, tries=2),
    ]
    assert_in_language(client.get(f"{base}/headphones/"), huggins)
    _headphone_answer(client, base, participant, right=False)
    _headphone_answer(client, base, participant, right=True)
    assert_in_language(
        client.get(f"{base}/headphones/"),
        [
            t(
                "That try did not succeed. Check that both sides of your headphones are on and that the volume is "
                "as you set it, then try again with new sounds."
            ),
            t.plural("You have %(tries)s try left.", "You have %(tries)s tries left.", 1, tries=1),
        ],
    )
    _headphone_answer(client, base, participant, right=True)
    _headphone_answer(client, base, participant, right=True)
    assert_in_language(
        client.get(f"{base}/headphones/"),
        [
            t("(part %(number)s of %(total)s)", number=2, total=2),
            t("You will hear three tones, one after another. Which tone is the quietest: 1, 2 or 3?"),
            t("Which tone was the quietest?"),
        ],
    )
    for _ in range(3):
        _headphone_answer(client, base, participant, right=False)
    assert_in_language(
        _headphone_answer(client, base, participant, right=False),
        [t("Thank you for your time"), t("The headphone check did not succeed, so you cannot take part.")],
    )
