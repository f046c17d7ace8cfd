"""The mismatch review: clips reported as not matching their transcript."""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import Participant, StudyItem
from annotation.services.assignment import NoTaskAvailable, assignment_claim
from tests.annotation.factories import ClipFactory, StudyFactory, StudyItemFactory

pytestmark = pytest.mark.django_db

ITEMS_URL = reverse("admin:annotation_studyitem_changelist")


def act(client, action, *items):
    return client.post(ITEMS_URL, {"action": action, "_selected_action": [item.pk for item in items]}, follow=True)


class TestMismatchReview:
    @pytest.fixture
    def study(self):
        study = StudyFactory(status="live", clips_per_task=5, attention_checks_per_task=0)
        for clip_id in ("matches", "wrong"):
            StudyItemFactory(
                study=study,
                clip=ClipFactory(corpus=study.corpus, external_id=clip_id, transcript=f"clip {clip_id}"),
                mismatch_count=2,
                review=StudyItem.Review.NEEDS_REVIEW,
            )
        return study

    def claimed(self, study) -> list[str]:
        task = assignment_claim(participant=Participant.objects.create(study=study))
        return list(task.items.values_list("clip__external_id", flat=True))

    def test_lists_items_awaiting_review_with_transcript_and_player(self, admin_client, study):
        StudyItemFactory(study=study, clip=ClipFactory(corpus=study.corpus, external_id="fine"))

        response = admin_client.get(ITEMS_URL + f"?study__id__exact={study.pk}&review__exact=needs_review")

        assert sorted(item.clip.external_id for item in response.context["cl"].result_list) == ["matches", "wrong"]
        page = response.content.decode()
        assert "clip wrong" in page and '<audio controls preload="none" src="/a/audio/' in page

    def test_cleared_clips_are_assigned_again_and_excluded_ones_never(self, admin_client, study):
        matches, wrong = (StudyItem.objects.get(clip__external_id=name) for name in ("matches", "wrong"))
        with pytest.raises(NoTaskAvailable):
            self.claimed(study)

        act(admin_client, "clear_after_review", matches)
        act(admin_client, "exclude_from_assignment", wrong)

        assert StudyItem.objects.get(pk=matches.pk).review == StudyItem.Review.CLEARED
        assert StudyItem.objects.get(pk=wrong.pk).review == StudyItem.Review.EXCLUDED
        assert self.claimed(study) == ["matches"]
        assert self.claimed(study) == ["matches"]

    def test_clearing_an_item_not_under_review_changes_nothing(self, admin_client, study):
        active = StudyItemFactory(study=study)

        page = act(admin_client, "clear_after_review", active).content.decode()

        assert StudyItem.objects.get(pk=active.pk).review == StudyItem.Review.ACTIVE
        assert "1 clip(s) left as they were (not awaiting review)" in page

    def test_needs_change_permission(self, client, study):
        item = StudyItem.objects.get(clip__external_id="wrong")
        user = User.objects.create_user("curator", password="pw", is_staff=True)
        client.force_login(user)
        assert client.get(ITEMS_URL).status_code == 403

        user.user_permissions.add(Permission.objects.get(codename="view_studyitem"))
        assert client.get(ITEMS_URL).status_code == 200
        act(client, "exclude_from_assignment", item)
        assert StudyItem.objects.get(pk=item.pk).review == StudyItem.Review.NEEDS_REVIEW

        user.user_permissions.add(Permission.objects.get(codename="change_studyitem"))
        act(client, "exclude_from_assignment", item)
        assert StudyItem.objects.get(pk=item.pk).review == StudyItem.Review.EXCLUDED
