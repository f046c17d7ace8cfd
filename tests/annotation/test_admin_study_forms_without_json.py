"""Creating an emphasis study in the admin without typing JSON (issue 20, defect 12): screening
answers one per line, an attention check's levels as the words that must take them, and a warning
when tasks ask for more clips than the study has."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from annotation.models import AttentionCheck, PrerequisiteQuestion, Study
from tests.annotation.admin_forms import change_page_data
from tests.annotation.factories import ClipFactory, StudyFactory
from tests.annotation.test_admin_study import create_payload

pytestmark = pytest.mark.django_db


def change_url(study) -> str:
    return reverse("admin:annotation_study_change", args=[study.pk])


def warnings(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request) if message.level_tag == "warning"]


@pytest.fixture
def study():
    return StudyFactory()


def test_screening_answers_are_typed_one_per_line(admin_client, study):
    data = change_page_data(admin_client.get(change_url(study)))
    data.update(
        {
            "prerequisites-TOTAL_FORMS": "1",
            "prerequisites-0-position": "0",
            "prerequisites-0-text": "Do you speak German fluently?",
            "prerequisites-0-choices": "Yes\nNo\nA little\n",
            "prerequisites-0-accepted": "Yes",
        }
    )

    assert admin_client.post(change_url(study), data).status_code == 302

    question = PrerequisiteQuestion.objects.get(study=study)
    assert (question.choices, question.accepted) == (["Yes", "No", "A little"], ["Yes"])
    page = admin_client.get(change_url(study)).content.decode()
    assert "Answers offered" in page and "Answers that qualify" in page
    assert "Yes\nNo\nA little</textarea>" in page  # shown as typed, not as JSON


def test_an_accepted_answer_that_is_not_offered_is_named(admin_client, study):
    data = change_page_data(admin_client.get(change_url(study)))
    data.update(
        {
            "prerequisites-TOTAL_FORMS": "1",
            "prerequisites-0-position": "0",
            "prerequisites-0-text": "Q?",
            "prerequisites-0-choices": "Yes\nNo",
            "prerequisites-0-accepted": "Yes\nMaybe",
        }
    )

    response = admin_client.post(change_url(study), data)

    assert response.status_code == 200
    assert "each must be one of the choices (not: Maybe)" in response.content.decode()


def post_check(client, study, **levels):
    clip = ClipFactory(corpus=study.corpus, external_id="check-1")  # "the cat sat on the mat"
    data = change_page_data(client.get(change_url(study)))
    data.update(
        {
            "attention_checks-TOTAL_FORMS": "1",
            "attention_checks-0-clip": str(clip.pk),
            "attention_checks-0-kind": "instructed",
        }
    )
    data.update({f"attention_checks-0-{name}": value for name, value in levels.items()})
    return client.post(change_url(study), data)


def test_an_attention_check_names_its_words_and_their_levels(admin_client, study):
    response = post_check(admin_client, study, heavily_emphasized="sat", emphasized="Mat", unmarked="1")

    assert response.status_code == 302
    assert AttentionCheck.objects.get().expected == {"2": 2, "5": 1, "0": 0}
    page = admin_client.get(change_url(study)).content.decode()
    assert "1 the · 2 cat · 3 sat · 4 on · 5 the · 6 mat" in page
    assert 'name="attention_checks-0-heavily_emphasized" value="3"' in page


@pytest.mark.parametrize(
    ("levels", "field", "message"),
    [
        (
            {"heavily_emphasized": "the"},
            "heavily_emphasized",
            "'the' occurs 2 times in clip check-1: give its position (1, 5).",
        ),
        ({"emphasized": "dog"}, "emphasized", "'dog' is not a word of clip check-1 (the cat sat on the mat)."),
        ({"unmarked": "7"}, "unmarked", "Position 7 is outside clip check-1, which has 6 word(s) (1 to 6)."),
        ({"heavily_emphasized": "cat", "unmarked": "2"}, "unmarked", "Word 2 (cat) is named for two levels."),
        ({}, "heavily_emphasized", "Name at least one word and the level it must take"),
    ],
)
def test_a_check_that_names_words_wrongly_is_explained(admin_client, study, levels, field, message):
    response = post_check(admin_client, study, **levels)

    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][1].formset.forms[0].errors
    assert message in " ".join(errors[field])
    assert not AttentionCheck.objects.exists()


def test_json_is_still_taken(admin_client, study):
    assert post_check(admin_client, study, expected='{"2": 2}').status_code == 302
    assert AttentionCheck.objects.get().expected == {"2": 2}


def test_more_clips_a_task_than_the_study_has_is_warned_of_at_creation_and_at_set_live(admin_client):
    corpus = StudyFactory().corpus
    for number in range(11):
        ClipFactory(corpus=corpus, external_id=f"w{number}")
    payload = create_payload(admin_client, corpus, consent_text="Voluntary.", attention_checks_per_task="0")

    created = admin_client.post(reverse("admin:annotation_study_add"), payload, follow=True)

    study = Study.objects.get(name="Emphasis pilot")
    assert study.clips_per_task == 20 and study.items.count() == 11
    assert any("Tasks ask for 20 clips but the study has 11" in text for text in warnings(created))
    live = admin_client.post(
        reverse("admin:annotation_study_changelist"),
        {"action": "set_live", "_selected_action": [study.pk]},
        follow=True,
    )
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE
    assert any("Tasks ask for 20 clips but the study has 11" in text for text in warnings(live))


def test_no_warning_when_the_clips_fill_a_task(admin_client):
    corpus = StudyFactory().corpus
    for number in range(3):
        ClipFactory(corpus=corpus, external_id=f"f{number}")
    payload = create_payload(admin_client, corpus, clips_per_task="3")

    created = admin_client.post(reverse("admin:annotation_study_add"), payload, follow=True)

    assert warnings(created) == []
