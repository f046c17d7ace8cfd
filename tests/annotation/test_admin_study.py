"""The study admin: creation from a corpus selection, state changes, settings, permissions."""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import ListeningFormItem, Participant, PrerequisiteQuestion, Study, StudyItem
from annotation.services.assignment import NoTaskAvailable, assignment_claim
from annotation.services.listening_forms import ListeningFormItemSpec
from annotation.services.studies import default_prerequisites
from tests.annotation.admin_forms import change_page_data, form_data
from tests.annotation.factories import ClipFactory, CorpusFactory, SpeakerFactory, StudyFactory, StudyItemFactory
from tests.annotation.study_helpers import live_form

pytestmark = pytest.mark.django_db

ADD_URL = reverse("admin:annotation_study_add")
CHANGELIST_URL = reverse("admin:annotation_study_changelist")
ITEMS_URL = reverse("admin:annotation_studyitem_changelist")


def change_url(study) -> str:
    return reverse("admin:annotation_study_change", args=[study.pk])


def staff_user(client, *codenames) -> User:
    user = User.objects.create_user("curator", password="pw", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client.force_login(user)
    return user


@pytest.fixture
def corpus():
    """Four clips that each kind of criterion tells apart, and one elsewhere."""
    corpus = CorpusFactory()
    speakers = {name: SpeakerFactory(corpus=corpus, name=name) for name in ("s1", "s2", "s3")}
    for external_id, language, variety, emotion, speaker, tags in [
        ("a", "en", "en-GB", "happy", "s1", ["news"]),
        ("b", "en", "en-US", "sad", "s2", ["news", "long"]),
        ("c", "de", "de-AT", "happy", "s1", []),
        ("d", "de", "de-DE", "neutral", "s3", ["long"]),
    ]:
        ClipFactory(
            corpus=corpus,
            external_id=external_id,
            language=language,
            variety=variety,
            emotion=emotion,
            speaker=speakers[speaker],
            tags=tags,
        )
    ClipFactory(external_id="elsewhere", language="en", tags=["news"])
    return corpus


def create_payload(client, corpus, **criteria) -> dict:
    page = client.get(ADD_URL)
    data = form_data(page.context["form"])  # the defaults the page offers
    return {**data, "name": "Emphasis pilot", "corpus": str(corpus.pk), **criteria}


class TestCreate:
    def test_the_page_offers_the_issue_defaults_and_the_corpus_values(self, admin_client, corpus):
        form = admin_client.get(ADD_URL).context["form"]

        initial = {
            name: form[name].value()
            for name in ("clips_per_task", "target_annotations", "min_marked_words", "max_marked_fraction")
        }
        assert initial == {
            "clips_per_task": 20,
            "target_annotations": 10,
            "min_marked_words": 1,
            "max_marked_fraction": 0.3,
        }
        assert [value for value, _ in form.fields["varieties"].choices] == ["de-AT", "de-DE", "en-GB", "en-US"]

    @pytest.mark.parametrize(
        ("criteria", "expected"),
        [
            ({}, ["a", "b", "c", "d"]),
            ({"languages": ["en"]}, ["a", "b"]),
            ({"varieties": ["de-AT", "en-US"]}, ["b", "c"]),
            ({"emotions": ["happy"]}, ["a", "c"]),
            ({"speakers": "s1"}, ["a", "c"]),
            ({"tags": "long"}, ["b", "d"]),
            ({"clip_ids": "d\n a \n\n"}, ["a", "d"]),
            ({"languages": ["en"], "tags": "news, long"}, ["a", "b"]),
        ],
        ids=["whole-corpus", "language", "variety", "emotion", "speaker", "tag", "clip-list", "combined"],
    )
    def test_creates_exactly_the_selected_items_and_default_prerequisites(
        self, admin_client, corpus, criteria, expected
    ):
        response = admin_client.post(ADD_URL, create_payload(admin_client, corpus, **criteria))

        study = Study.objects.get()
        assert response.status_code == 302 and response["Location"] == change_url(study)
        assert sorted(study.items.values_list("clip__external_id", flat=True)) == expected
        assert study.status == Study.Status.DRAFT and study.slug == "emphasis-pilot"
        assert (study.clips_per_task, study.target_annotations, study.max_marked_fraction) == (20, 10, 0.3)
        questions = list(study.prerequisites.values("text", "choices", "accepted"))
        assert questions == default_prerequisites(study.language)
        assert all(study.selection[name] for name in study.selection)

    def test_a_single_language_selection_sets_the_study_language(self, admin_client, corpus):
        admin_client.post(ADD_URL, create_payload(admin_client, corpus, languages=["de"], target_annotations="3"))

        study = Study.objects.get()
        assert (study.language, study.target_annotations, study.selection) == ("de", 3, {"languages": ["de"]})
        assert "Is German your first language" in study.prerequisites.first().text

    def test_unknown_clip_ids_and_speakers_are_named(self, admin_client, corpus):
        response = admin_client.post(
            ADD_URL, create_payload(admin_client, corpus, clip_ids="a\nzz\nelsewhere", speakers="s1,nobody")
        )

        errors = response.context["form"].errors
        assert errors["clip_ids"] == [f"No clip of corpus {corpus.name!r} is called: zz, elsewhere"]
        assert errors["speakers"] == [f"No speaker of corpus {corpus.name!r} is called: nobody"]
        assert not Study.objects.exists()

    def test_a_selection_without_clips_is_refused(self, admin_client, corpus):
        response = admin_client.post(
            ADD_URL, create_payload(admin_client, corpus, languages=["en"], varieties=["de-AT"])
        )

        assert "matches this selection" in response.content.decode()
        assert not Study.objects.exists()


def act(client, action, *studies, url=CHANGELIST_URL):
    return client.post(url, {"action": action, "_selected_action": [s.pk for s in studies]}, follow=True)


class TestStatusActions:
    @pytest.mark.parametrize(
        ("start", "action", "end"),
        [
            ("draft", "set_live", "live"),
            ("live", "set_paused", "paused"),
            ("paused", "set_live", "live"),
            ("live", "set_closed", "closed"),
            ("closed", "set_live", "live"),  # reopened for a top-up rerun
            ("live", "set_draft", "draft"),  # nobody entered yet
            ("draft", "set_paused", "draft"),
            ("draft", "set_closed", "draft"),
            ("closed", "set_paused", "closed"),
        ],
    )
    def test_only_sensible_transitions(self, admin_client, start, action, end):
        study = StudyFactory(status=start, attention_checks_per_task=0)

        act(admin_client, action, study)

        assert Study.objects.get(pk=study.pk).status == end

    def test_back_to_draft_is_refused_once_participants_entered(self, admin_client):
        study, untouched = StudyFactory(status="live", name="entered"), StudyFactory(status="paused", name="empty")
        Participant.objects.create(study=study)

        page = act(admin_client, "set_draft", study, untouched).content.decode()

        assert Study.objects.get(pk=study.pk).status == "live"
        assert Study.objects.get(pk=untouched.pk).status == "draft"
        assert "entered (participants have entered it)" in page

    def test_going_live_without_enough_attention_checks_is_refused(self, admin_client):
        study = StudyFactory(name="Pilot", attention_checks_per_task=2, consent_text="We record your marks.")

        page = act(admin_client, "set_live", study).content.decode()

        assert Study.objects.get(pk=study.pk).status == "draft"
        assert "Not set live: Pilot (it asks for 2 attention check(s) per task but has 0" in page

    def test_going_live_without_consent_text_is_refused(self, admin_client):
        study = StudyFactory(name="Pilot", attention_checks_per_task=0, consent_text="  ")

        page = act(admin_client, "set_live", study).content.decode()

        assert Study.objects.get(pk=study.pk).status == "draft"
        assert "Not set live: Pilot (it has no consent text" in page

    def test_only_live_studies_hand_out_work(self, admin_client):
        study = StudyFactory(status="draft", attention_checks_per_task=0)
        StudyItemFactory(study=study)
        participant = Participant.objects.create(study=study)
        with pytest.raises(NoTaskAvailable, match="not open"):
            assignment_claim(participant=participant)

        act(admin_client, "set_live", study)

        participant.study.refresh_from_db()
        assert assignment_claim(participant=participant).items.count() == 1


class TestChangePage:
    def test_list_shows_status_counts_and_participant_link(self, admin_client):
        study = StudyFactory(status="live", slug="pilot")
        StudyItemFactory(study=study, completed_count=3)
        StudyItemFactory(study=study, completed_count=4, review=StudyItem.Review.NEEDS_REVIEW, mismatch_count=2)
        Participant.objects.create(study=study)
        StudyFactory()  # counts must not leak between studies

        page = admin_client.get(CHANGELIST_URL).content.decode()
        rows = admin_client.get(CHANGELIST_URL).context["cl"].result_list
        row = next(row for row in rows if row.pk == study.pk)

        assert (row.clip_count, row.annotations_done, row.participants_total, row.clips_to_review) == (2, 7, 1, 1)
        assert '<a href="/s/pilot/">/s/pilot/</a>' in page

    def test_corpus_and_codes_are_read_only_and_the_tools_are_linked(self, admin_client):
        study = StudyFactory()
        StudyItemFactory(study=study)

        response = admin_client.get(change_url(study))
        page = response.content.decode()

        form = response.context["adminform"].form
        assert not {"corpus", "selection", "status", "completion_code", "screen_out_code"} & set(form.fields)
        assert study.completion_code in page and study.screen_out_code in page
        assert reverse("admin:annotation_study_topup", args=[study.pk]) in page
        assert f"{ITEMS_URL}?study__id__exact={study.pk}&amp;review__exact=needs_review" in page

    def test_settings_save_unchanged(self, admin_client):
        study = StudyFactory()
        PrerequisiteQuestion.objects.create(study=study, text="Fluent?", choices=["Yes", "No"], accepted=["Yes"])
        data = change_page_data(admin_client.get(change_url(study)))

        response = admin_client.post(change_url(study), {**data, "places": "40"})

        assert response.status_code == 302
        assert Study.objects.get(pk=study.pk).places == 40

    def test_the_fields_shown_follow_the_study_kind(self, admin_client):
        emphasis_only = {
            "min_marked_words",
            "max_marked_fraction",
            "mismatch_threshold",
            "example_clip",
            "example_levels",
            "review_min_kappa",
        }
        emphasis = StudyFactory(interface_language="ar", text_direction="rtl")
        form_study = live_form(
            specs=lambda clips: [
                ListeningFormItemSpec("c", ListeningFormItem.Type.SINGLE_CHOICE, clips[0], options=["a", "b"], gold=0)
            ]
        )

        shown = admin_client.get(change_url(emphasis))
        assert emphasis_only | {"interface_language", "text_direction"} <= set(shown.context["adminform"].form.fields)
        assert [inline.formset.prefix for inline in shown.context["inline_admin_formsets"]] == [
            "prerequisites",
            "attention_checks",
        ]
        assert "Three-level word emphasis" in shown.content.decode()  # the kind, read only

        response = admin_client.get(change_url(form_study))
        fields = set(response.context["adminform"].form.fields)
        assert not emphasis_only & fields and {"interface_language", "text_direction"} <= fields
        assert [inline.formset.prefix for inline in response.context["inline_admin_formsets"]] == ["prerequisites"]
        page = response.content.decode()
        assert "Marking, playback and sound check" not in page and "Listening form" in page

        saved = admin_client.post(change_url(form_study), {**change_page_data(response), "interface_language": "de"})
        assert saved.status_code == 302 and Study.objects.get(pk=form_study.pk).interface_language == "de"


class TestPermissions:
    def test_staff_without_permissions_get_403(self, client):
        study = StudyFactory()
        StudyItemFactory(study=study)
        staff_user(client)

        for url in (ADD_URL, CHANGELIST_URL, change_url(study), ITEMS_URL):
            assert client.get(url).status_code == 403, url

    def test_viewing_is_not_changing(self, client):
        study = StudyFactory(status="draft")
        item = StudyItemFactory(study=study, review=StudyItem.Review.NEEDS_REVIEW)
        staff_user(client, "view_study", "view_studyitem")

        assert client.get(ADD_URL).status_code == 403
        act(client, "set_live", study)
        act(client, "clear_after_review", item, url=ITEMS_URL)

        assert Study.objects.get(pk=study.pk).status == "draft"
        assert StudyItem.objects.get(pk=item.pk).review == StudyItem.Review.NEEDS_REVIEW

    def test_add_permission_creates(self, client, corpus):
        staff_user(client, "add_study", "view_study")

        client.post(ADD_URL, create_payload(client, corpus, clip_ids="a"))

        assert Study.objects.get().selection == {"clip_ids": ["a"]}


# --- first contact: the study page leads on to its report and its review, and says how far it is


@pytest.mark.django_db
def test_the_study_page_links_its_agreement_report_and_review_and_shows_progress(admin_client):
    from tests.annotation.study_helpers import live_study

    study = live_study(clips=4, target_annotations=3)
    StudyItem.objects.filter(pk__in=study.items.order_by("pk").values("pk")[:2]).update(completed_count=3)

    page = admin_client.get(change_url(study)).content.decode()
    listing = admin_client.get(reverse("admin:annotation_study_changelist")).content.decode()

    report = reverse("admin:evaluation_agreementreport_study", args=[study.pk])
    review = reverse("admin:annotation_participant_review", args=[study.pk])
    assert f'<a href="{report}">Agreement report</a>' in page
    assert f'<a href="{review}">Review participants</a>' in page
    progress = "6 of 12 annotations (50 %): 3 per clip, 4 clips"
    assert progress in page and progress in listing
    assert admin_client.get(report).status_code == 200 and admin_client.get(review).status_code == 200


@pytest.mark.django_db
def test_who_may_not_review_gets_no_review_link(client):
    study = StudyFactory()
    user = User.objects.create_user("viewer", password="x", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_study"))
    client.force_login(user)

    page = client.get(change_url(study)).content.decode()

    assert "Review participants" not in page and "Agreement report" not in page  # nor view_agreementreport
