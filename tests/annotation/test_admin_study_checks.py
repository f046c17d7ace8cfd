"""Settings of a study that name word indices and levels, checked on its admin page."""

import pytest
from django.urls import reverse

from annotation.models import AttentionCheck
from tests.annotation.admin_forms import change_page_data
from tests.annotation.factories import ClipFactory, StudyFactory

pytestmark = pytest.mark.django_db


def change_url(study) -> str:
    return reverse("admin:annotation_study_change", args=[study.pk])


class TestAttentionChecks:
    @pytest.fixture
    def study(self):
        return StudyFactory()

    def post_check(self, client, study, expected):
        clip = ClipFactory(corpus=study.corpus, external_id="check-1")  # "the cat sat on the mat": 6 words
        data = change_page_data(client.get(change_url(study)))
        data.update(
            {
                "attention_checks-TOTAL_FORMS": "1",
                "attention_checks-0-clip": str(clip.pk),
                "attention_checks-0-kind": "instructed",
                "attention_checks-0-expected": expected,
            }
        )
        return client.post(change_url(study), data)

    @pytest.mark.parametrize(
        ("expected", "message"),
        [
            ('{"6": 2}', "Word index 6 is outside clip check-1, which has 6 word(s) (indices 0 to 5)."),
            ('{"-1": 1}', "Word index -1 is outside clip check-1"),
            ('{"x": 1}', "'x' is not a word index"),
            ('{"2": 3}', "Level 3 for word 2 must be 0, 1 or 2."),
            ('{"2": true}', "Level True for word 2 must be 0, 1 or 2."),
            ("[2]", "as a JSON object"),
            ("{}", "Name at least one word and the level it must take"),
        ],
    )
    def test_bad_expected_answers_are_explained(self, admin_client, study, expected, message):
        response = self.post_check(admin_client, study, expected)

        assert response.status_code == 200
        assert message in " ".join(response.context["inline_admin_formsets"][1].formset.forms[0].errors["expected"])
        assert not AttentionCheck.objects.exists()

    def test_a_good_check_is_saved(self, admin_client, study):
        assert self.post_check(admin_client, study, '{"05": 2, "1": 0}').status_code == 302

        assert AttentionCheck.objects.get().expected == {"5": 2, "1": 0}

    def test_example_levels_must_fit_the_example_clip(self, admin_client, study):
        clip = ClipFactory(corpus=study.corpus)
        data = change_page_data(admin_client.get(change_url(study)))

        response = admin_client.post(
            change_url(study), {**data, "example_clip": clip.pk, "example_levels": "[0, 0, 0, 0, 0, 0, 1]"}
        )

        assert "Word index 6 is outside clip" in " ".join(response.context["adminform"].form.errors["example_levels"])

    def test_accepted_prerequisite_answers_must_be_choices(self, admin_client, study):
        data = change_page_data(admin_client.get(change_url(study)))
        data.update(
            {
                "prerequisites-TOTAL_FORMS": "1",
                "prerequisites-0-position": "0",
                "prerequisites-0-text": "Q?",
                "prerequisites-0-choices": '["Yes", "No"]',
                "prerequisites-0-accepted": '["Maybe"]',
            }
        )

        response = admin_client.post(change_url(study), data)

        assert "each must be one of the choices" in response.content.decode()


DEEP = "[" * 50000 + "]" * 50000  # past the JSON parser's recursion limit


@pytest.mark.parametrize(
    "fields",
    [
        {"example_levels": DEEP},
        {
            "prerequisites-TOTAL_FORMS": "1",
            "prerequisites-0-position": "0",
            "prerequisites-0-text": "Q?",
            "prerequisites-0-choices": DEEP,
            "prerequisites-0-accepted": '["Yes"]',
        },
        {
            "attention_checks-TOTAL_FORMS": "1",
            "attention_checks-0-kind": "instructed",
            "attention_checks-0-expected": DEEP,
        },
    ],
    ids=["example levels", "prerequisite choices", "attention check expected"],
)
def test_json_nested_too_deeply_is_refused_with_a_message_not_a_500(admin_client, fields):
    study = StudyFactory()
    data = change_page_data(admin_client.get(change_url(study)))
    if "attention_checks-TOTAL_FORMS" in fields:
        fields = {**fields, "attention_checks-0-clip": str(ClipFactory(corpus=study.corpus).pk)}

    response = admin_client.post(change_url(study), {**data, **fields})

    assert response.status_code == 200
    assert "Enter a valid JSON: it is nested too deeply." in response.content.decode()
    assert not AttentionCheck.objects.exists() and not study.prerequisites.exists()
