"""A study that judges renditions for CAST lets a listener mark no word (a flat rendition) or
every word (an over-expressive one), the two answers Pair-Contrast penalises (issue 20, defect 8):
"at least 0" and "no limit" are taken alike by the admin, the task page and the submit service."""

import pytest
from django.urls import reverse

from annotation.models import Annotation, Study
from annotation.services.assignment import assignment_claim
from annotation.services.gates import marking_rule, max_marks
from annotation.services.submission import SubmissionRefused, annotation_submit
from tests.annotation.admin_forms import change_page_data
from tests.annotation.study_helpers import first_pending, listened, live_study, ready_participant
from tests.annotation.test_admin_study import create_payload

pytestmark = pytest.mark.django_db

ADD_URL = reverse("admin:annotation_study_add")


def test_the_admin_creates_a_study_that_takes_zero_marks_and_any_number(admin_client):
    corpus = live_study(clips=2).corpus
    payload = create_payload(admin_client, corpus, min_marked_words="0", max_marked_fraction="")

    response = admin_client.post(ADD_URL, payload)

    assert response.status_code == 302, response.context["form"].errors
    study = Study.objects.get(name="Emphasis pilot")
    assert (study.min_marked_words, study.max_marked_fraction) == (0, None)


def test_the_change_page_clears_the_limit_and_refuses_a_share_of_nothing(admin_client):
    study = live_study(clips=2)
    url = reverse("admin:annotation_study_change", args=[study.pk])

    page = admin_client.get(url)
    cleared = admin_client.post(url, {**change_page_data(page), "min_marked_words": "0", "max_marked_fraction": ""})
    assert cleared.status_code == 302
    study.refresh_from_db()
    assert (study.min_marked_words, study.max_marked_fraction) == (0, None)

    refused = admin_client.post(url, {**change_page_data(admin_client.get(url)), "max_marked_fraction": "0"})
    assert refused.status_code == 200
    assert "leave it empty for no limit" in str(refused.context["adminform"].form.errors["max_marked_fraction"])


@pytest.mark.parametrize("marked", ["none", "every word, heavily"])
def test_the_submit_service_takes_a_flat_and_an_over_expressive_rendition(marked):
    study = live_study(clips=2, clips_per_task=1, min_marked_words=0, max_marked_fraction=None)
    participant = ready_participant(study)
    item = first_pending(assignment_claim(participant=participant))
    listened(item)
    levels = [0] * item.word_count if marked == "none" else [2] * item.word_count

    annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=levels, mismatch=False)

    assert Annotation.objects.get().levels == levels


def test_the_default_study_still_refuses_both():
    study = live_study(clips=2, clips_per_task=1)
    participant = ready_participant(study)
    item = first_pending(assignment_claim(participant=participant))
    listened(item)
    for levels in ([0] * item.word_count, [1] * item.word_count):
        with pytest.raises(SubmissionRefused):
            annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=levels, mismatch=False)


def test_the_limit_on_marks():
    assert max_marks(word_count=10, min_marked=0, max_fraction=None) == 10
    # A study that allows zero marks still lets a short clip have one: 30 % of 3 words is 0.
    assert max_marks(word_count=3, min_marked=0, max_fraction=0.3) == 1
    assert max_marks(word_count=10, min_marked=1, max_fraction=0.3) == 3


@pytest.mark.parametrize(
    ("fewest", "most", "words", "text"),
    [
        (1, 3, 10, "Mark 1 to 3 words the speaker emphasized."),
        (1, 1, 3, "Mark exactly 1 word: the one the speaker emphasized most."),
        (2, 2, 8, "Mark exactly 2 words: those the speaker emphasized most."),
        (0, 3, 10, "Mark up to 3 words the speaker emphasized, or none."),
        (1, 10, 10, "Mark at least 1 word the speaker emphasized."),
        (0, 10, 10, "Mark the words the speaker emphasized, if any: leaving every word unmarked is an answer too."),
    ],
)
def test_the_rule_said_up_front(fewest, most, words, text):
    assert marking_rule(fewest=fewest, most=most, word_count=words) == text
