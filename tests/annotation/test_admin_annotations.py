"""The read-only annotation list in the admin, and the links to it from the review and study pages."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import Annotation, ListeningFormItem, Participant
from annotation.participant_names import participant_annotator_id
from annotation.services.listening_forms import ListeningFormItemSpec
from tests.annotation.factories import (
    AnnotationFactory,
    AttentionCheckFactory,
    ClipFactory,
    ParticipantFactory,
    StudyFactory,
    TaskFactory,
    TaskItemFactory,
)
from tests.annotation.study_helpers import live_form

pytestmark = pytest.mark.django_db

LIST = "admin:annotation_annotation_changelist"


@pytest.fixture
def login(client):
    """Log in a fresh staff user holding the given permissions."""

    def logged_in(*codenames: str) -> User:
        user = User.objects.create_user(f"staff-{User.objects.count()}", password="pw", is_staff=True)
        user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
        client.force_login(user)
        return user

    return logged_in


class TwoStudies:
    """An English study with two participants (one approved and finished) and an
    attention check, and a German study with one participant."""

    def __init__(self):
        self.study = StudyFactory(name="English study")
        self.ana = ParticipantFactory(study=self.study, decision=Participant.Decision.APPROVED)
        self.ana_task = TaskFactory(participant=self.ana)
        self.cat = self.annotate(self.ana_task, "cat-clip", "the cat sat", [0, 2, 1])
        check = AttentionCheckFactory(study=self.study, expected={"1": 2})
        AnnotationFactory(
            item=TaskItemFactory(task=self.ana_task, clip=check.clip, attention_check=check), levels=[0, 2, 0, 0, 0, 0]
        )
        self.ben = ParticipantFactory(study=self.study)
        self.dog = self.annotate(TaskFactory(participant=self.ben), "dog-clip", "a dog barked", [1, 0, 0])

        self.german = StudyFactory(name="German study")
        self.cleo = ParticipantFactory(study=self.german)
        self.hund = self.annotate(TaskFactory(participant=self.cleo), "hund-clip", "der Hund bellt", [0, 1, 0], "de")
        Participant.objects.filter(pk=self.ana.pk).update(completed_at=self.ana_task.created_at)

    @staticmethod
    def annotate(task, clip_id: str, words: str, levels: list[int], language: str = "en") -> Annotation:
        clip = ClipFactory(corpus=task.study.corpus, external_id=clip_id, transcript=words, language=language)
        return AnnotationFactory(item=TaskItemFactory(task=task, clip=clip), levels=levels)


@pytest.fixture
def studies():
    return TwoStudies()


def listed(client, query: str = "") -> str:
    response = client.get(reverse(LIST) + query)
    assert response.status_code == 200
    return response.content.decode()


def test_list_shows_every_annotation_readably_with_its_filters(client, login, studies):
    login("view_annotation")

    page = listed(client)

    assert "the cat² sat¹" in page and 'title="levels: 0 2 1"' in page
    assert "a¹ dog barked" in page and "der Hund¹ bellt" in page
    assert page.count(">passed<") == 1  # the attention check
    for title in ("study", "decision", "participant finished", "language", "mismatch reported"):
        assert f"By {title}" in page
    assert 'id="searchbar"' in page and "submitted_at__year" in page  # clip search, date hierarchy


def test_filters_by_study_decision_finished_language_clip_and_date(client, login, studies):
    login("view_annotation")

    by_study = listed(client, f"?participant__study__id__exact={studies.german.pk}")
    assert "hund-clip" in by_study and "cat-clip" not in by_study
    approved = listed(client, "?participant__decision__exact=approved")
    assert "cat-clip" in approved and "dog-clip" not in approved
    unfinished = listed(client, "?finished=no")
    assert "dog-clip" in unfinished and "cat-clip" not in unfinished
    german = listed(client, "?clip__language=de")  # the language filter's own link
    assert "hund-clip" in german and "dog-clip" not in german
    searched = listed(client, "?q=dog")
    assert "dog-clip" in searched and "hund-clip" not in searched
    Annotation.objects.filter(pk=studies.dog.pk).update(submitted_at=datetime(2020, 5, 1, tzinfo=UTC))
    in_2020 = listed(client, "?submitted_at__year=2020")
    assert "dog-clip" in in_2020 and "cat-clip" not in in_2020


def test_participant_filter_lists_only_their_annotations(client, login, studies):
    login("view_annotation")

    page = listed(client, f"?participant={studies.ben.pk}")

    assert "dog-clip" in page and "cat-clip" not in page and "hund-clip" not in page
    ben = participant_annotator_id(
        study_slug=studies.ben.study.slug, participant_pk=studies.ben.pk, prolific_pid=studies.ben.prolific_pid
    )
    assert "By participant" in page and ben in page


def test_staff_without_view_annotation_get_403(client, login, studies):
    login("view_participant", "change_participant")

    assert client.get(reverse(LIST)).status_code == 403
    assert client.get(reverse("admin:annotation_annotation_change", args=[studies.cat.pk])).status_code == 403


def test_annotations_cannot_be_added_changed_or_deleted(client, login, studies):
    login("view_annotation")
    detail = reverse("admin:annotation_annotation_change", args=[studies.cat.pk])

    assert client.get(reverse("admin:annotation_annotation_add")).status_code == 403
    assert client.post(detail, {"levels": "[2, 2, 2]"}).status_code == 403
    assert client.get(reverse("admin:annotation_annotation_delete", args=[studies.cat.pk])).status_code == 403
    assert 'name="levels"' not in client.get(detail).content.decode()
    studies.cat.refresh_from_db()
    assert studies.cat.levels == [0, 2, 1]


def test_prolific_ids_are_shown_and_searchable_only_with_change_participant(client, login, studies):
    login("view_annotation")
    detail = reverse("admin:annotation_annotation_change", args=[studies.cat.pk])

    assert studies.ana.prolific_pid not in listed(client)
    assert studies.ana.prolific_pid not in listed(client, f"?participant={studies.ana.pk}")
    assert studies.ana.prolific_pid not in client.get(detail).content.decode()
    assert "cat-clip" not in listed(client, f"?q={studies.ana.prolific_pid}")

    login("view_annotation", "change_participant")
    ana = participant_annotator_id(
        study_slug=studies.ana.study.slug, participant_pk=studies.ana.pk, prolific_pid=studies.ana.prolific_pid
    )
    assert f"{ana} ({studies.ana.prolific_pid})" in listed(client)
    assert studies.ana.prolific_pid in client.get(detail).content.decode()
    found = listed(client, f"?q={studies.ana.prolific_pid}")
    assert "cat-clip" in found and "dog-clip" not in found


def test_a_page_of_50_annotations_takes_a_bounded_number_of_queries(client, login, django_assert_max_num_queries):
    study = StudyFactory()
    clips = [ClipFactory(corpus=study.corpus, transcript="one two three four") for _ in range(5)]
    for _ in range(10):
        task = TaskFactory(participant=ParticipantFactory(study=study))
        for clip in clips:
            AnnotationFactory(item=TaskItemFactory(task=task, clip=clip), levels=[0, 1, 2, 0])
    login("view_annotation", "change_participant")

    # Session, user, 2 for permissions, the study and language filters, 2 counts, the page, its words,
    # 2 for the date hierarchy: the same for 5 annotations as for 50.
    with django_assert_max_num_queries(12):
        page = listed(client)

    assert page.count("one two¹ three²") == 50


def form_specs(clips):
    stance = {"positive": "warm", "negative": "cold"}
    return [
        ListeningFormItemSpec(
            "meaning", ListeningFormItem.Type.SINGLE_CHOICE, clips[0], options=["a joke", "a threat"]
        ),
        ListeningFormItemSpec(
            "pair", ListeningFormItem.Type.PAIRWISE, clips[1], second_clip=clips[2], settings={"allow_tie": True}
        ),
        ListeningFormItemSpec("mos", ListeningFormItem.Type.RATING, clips[1], options=["bad", "fine", "great"]),
        ListeningFormItemSpec("slider", ListeningFormItem.Type.RATING, clips[2]),
        ListeningFormItemSpec("tone", ListeningFormItem.Type.STANCE, clips[3], settings=stance),
        ListeningFormItemSpec(
            "ssd", ListeningFormItem.Type.STRESSED_WORDS, clips[0], settings={"attention_check": True}, gold=[0] * 7
        ),
    ]


def test_listening_form_answers_are_shown_in_the_items_terms(client, login):
    study = live_form(specs=form_specs)
    task = TaskFactory(participant=ParticipantFactory(study=study))
    answers = {
        "meaning": {"choice": 1},
        "pair": {"prefer": "none"},
        "mos": {"value": 3.0},
        "slider": {"value": 72.0},
        "tone": {"pole": "N", "confidence": 0.8, "pole_order": "PN"},
        "ssd": {},
    }
    for item in ListeningFormItem.objects.filter(study=study).select_related("study_item"):
        levels = [0, 0, 1, 0, 0, 0, 0] if item.external_id == "ssd" else []
        task_item = TaskItemFactory(task=task, clip=item.clip, study_item=item.study_item)
        AnnotationFactory(item=task_item, levels=levels, response=answers[item.external_id], attention_passed=False)
    login("view_annotation")

    page = listed(client)

    for text in (
        "meaning: “a threat”",
        "pair: no preference",
        "mos: 3 – great",
        "slider: 72 / 100",
        "tone: cold (sure: 80 %)",
        "ssd: I did not¹ say she stole it",
    ):
        assert text in page
    assert page.count(">failed<") == 1  # the stressed-words item is the form's attention check


# --- links from the review page and the study page -----------------------------------


def test_review_page_links_to_the_study_and_each_participants_annotations(client, login, studies):
    login("change_participant", "view_annotation")
    study_list = f"{reverse(LIST)}?participant__study__id__exact={studies.study.pk}"

    page = client.get(reverse("admin:annotation_participant_review", args=[studies.study.pk])).content.decode()

    assert f'href="{study_list}"' in page
    for participant in (studies.ana, studies.ben):
        assert f'href="{study_list}&amp;participant={participant.pk}"' in page
    assert listed(client, f"?participant__study__id__exact={studies.study.pk}&participant={studies.ben.pk}").count(
        "dog-clip"
    )


def test_review_page_has_no_annotation_links_without_view_annotation(client, login, studies):
    login("change_participant")

    page = client.get(reverse("admin:annotation_participant_review", args=[studies.study.pk])).content.decode()

    assert reverse(LIST) not in page


def test_study_page_links_to_its_annotations(client, login, studies):
    login("view_study", "view_annotation")

    page = client.get(reverse("admin:annotation_study_change", args=[studies.study.pk])).content.decode()

    assert f'href="{reverse(LIST)}?participant__study__id__exact={studies.study.pk}">Annotations</a>' in page
