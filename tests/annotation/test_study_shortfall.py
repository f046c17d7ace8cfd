"""Nothing stalls or shrinks silently (issue 33): attention-check clips, the check's rule and pass
rate, rejected work counted out of the clips' counts, the study page's account of what is missing,
its state buttons and its raw export."""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import AttentionCheck, StudyItem, Task, TaskItem
from annotation.selectors.attention_results import attention_pass_text
from annotation.selectors.study_shortfall import shortfall_text, study_shortfall
from annotation.services.assignment import assignment_claim
from annotation.services.review import participant_decide
from annotation.services.studies import study_status_refusal
from annotation.services.topups import topup_plan
from evaluation.models import DatasetExport
from tests.annotation.factories import (
    AnnotationFactory,
    AttentionCheckFactory,
    ClipFactory,
    StudyFactory,
    TaskFactory,
    TaskItemFactory,
)
from tests.annotation.study_helpers import live_study, ready_participant
from tests.api.callers import staff_with, token_client

pytestmark = pytest.mark.django_db
REJECTION = "Your answers marked the same word in every clip, whatever the speaker said; " * 2


class TestTheCheckRule:
    @pytest.mark.parametrize(
        ("rule", "levels", "passed"),
        [
            ("at_least", [0, 1, 0], True),
            ("at_least", [0, 2, 0], True),  # heavy where emphasized is asked: the listener heard it
            ("at_least", [0, 0, 0], False),
            ("at_least", [1, 1, 0], False),  # "must stay unmarked" means unmarked under either rule
            ("exact", [0, 2, 0], False),
            ("exact", [0, 1, 0], True),
        ],
    )
    def test_at_least_the_level_named_or_exactly(self, rule, levels, passed):
        check = AttentionCheck(expected={"1": 1, "0": 0}, rule=rule)

        assert check.passed_by(levels) is passed

    def test_a_new_check_asks_for_at_least_the_level(self):
        assert AttentionCheckFactory().rule == AttentionCheck.Rule.AT_LEAST


class TestCheckClipsAmongTheStudysClips:
    def test_the_api_refuses_one_of_the_studys_own_clips_saying_why(self):
        study = live_study(clips=3)
        own = study.items.first().clip
        client = token_client(staff_with("annotation.change_study", "annotation.view_study"))

        response = client.patch(
            f"/api/v1/studies/{study.pk}/",
            {"attention_checks": [{"clip": own.pk, "expected": {"0": 2}}]},
            format="json",
        )

        assert response.status_code == 400, response.json()
        (message,) = response.json()["attention_checks"]["0"]["clip"]
        assert message.startswith(f"Clip {own.external_id!r} is one of the study's own clips")
        assert not AttentionCheck.objects.exists()

    def test_a_study_made_before_with_such_a_check_is_not_set_live_and_says_so(self):
        study = live_study(clips=3, status="draft", attention_checks_per_task=1, consent_text="I agree.")
        own = study.items.order_by("pk").first()
        AttentionCheck.objects.create(study=study, clip=own.clip, expected={"0": 2})  # as before the rule

        refusal = study_status_refusal(study=study, status="live")
        assert f"attention check clip(s) {own.clip.external_id} are also among the study's clips" in refusal
        text = shortfall_text(study_shortfall(study=study))
        assert f"{study.target_annotations} on clips that are also attention checks (never handed out)" in text
        assert f"Attention-check clip(s) among the study's clips: {own.clip.external_id}" in text
        # Top-ups open no place for it: nobody would ever be given it.
        assert topup_plan(study=study).total.missing_annotations == 2 * study.target_annotations


class TestRejectedWork:
    def completed(self, study, participant, items):
        task = TaskFactory(participant=participant, study=study, status=Task.Status.COMPLETED)
        for item in items:
            AnnotationFactory(
                item=TaskItemFactory(task=task, clip=item.clip, study_item=item, status=TaskItem.Status.SUBMITTED),
                participant=participant,
                levels=[1] + [0] * 9,
            )
        StudyItem.objects.filter(pk__in=[item.pk for item in items]).update(completed_count=study.target_annotations)

    def test_a_rejection_takes_the_work_out_of_the_counts_and_lifting_it_puts_it_back(self):
        study = live_study(clips=3, clips_per_task=3, target_annotations=1, places=1)
        person = ready_participant(study, prolific_pid="a" * 24)
        items = list(study.items.order_by("pk"))
        self.completed(study, person, items)
        assert shortfall_text(study_shortfall(study=study)) == "Complete: every clip has its 1 annotation(s)."

        participant_decide(participant=person, decision="rejected", category="LOW_EFFORT", note=REJECTION)

        assert sorted(study.items.values_list("completed_count", flat=True)) == [0, 0, 0]
        text = shortfall_text(study_shortfall(study=study))
        assert "Not complete: 3 annotation(s) missing on 3 of 3 clip(s): 3 not yet handed out" in text
        assert "Of the missing: 3 left by rejected work." in text
        assert topup_plan(study=study).places_to_open == 1  # the rejected task still holds its place
        # Assignment hands the clips out again.
        other = ready_participant(study, prolific_pid="b" * 24)
        study.places = 2
        study.save(update_fields=["places"])
        assert assignment_claim(participant=other).items.count() == 3

        participant_decide(participant=person, decision="approved")
        assert sorted(study.items.values_list("completed_count", flat=True)) == [1, 1, 1]

    def test_the_page_says_where_the_missing_annotations_stand(self):
        study = live_study(clips=3, target_annotations=2)
        first, second, third = study.items.order_by("pk")
        StudyItem.objects.filter(pk=first.pk).update(reserved_count=1, completed_count=1)
        StudyItem.objects.filter(pk=second.pk).update(review=StudyItem.Review.EXCLUDED)
        StudyItem.objects.filter(pk=third.pk).update(completed_count=2)

        shortfall = study_shortfall(study=study)

        assert (shortfall.missing, shortfall.clips_short) == (3, 2)
        assert shortfall.where == {"reserved": 1, "excluded": 2}


def test_the_pass_rate_of_the_checks():
    check = AttentionCheckFactory(expected={"1": 1})
    for index, levels in enumerate(([0, 2, 0], [0, 1, 0], [0, 0, 0])):
        task = TaskFactory(participant__study=check.study, participant__prolific_pid=f"{index:024x}")
        AnnotationFactory(
            item=TaskItemFactory(task=task, clip=check.clip, attention_check=check),
            levels=levels,
            attention_passed=check.passed_by(levels),
        )

    text = attention_pass_text(study=check.study)

    assert text == "2 of 3 check answers passed (67%); 2 of 3 participants passed every check."


class TestTheStudyPage:
    def staff(self, client, *perms):
        user = User.objects.create_user("researcher", password="x", is_staff=True)
        for name in perms:
            app, codename = name.split(".")
            user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
        client.force_login(user)
        return user

    def test_set_live_is_a_button_and_a_refusal_says_what_is_missing(self, admin_client):
        study = live_study(clips=3, status="draft", consent_text="", attention_checks_per_task=0)
        page = reverse("admin:annotation_study_change", args=[study.pk])
        live = reverse("admin:annotation_study_status", args=[study.pk, "live"])

        shown = admin_client.get(page).content.decode()
        assert f'action="{live}"' in shown and ">Set live (hand out work)</button>" in shown
        assert "Set live is refused: it has no consent text" in shown

        refused = admin_client.post(live, follow=True).content.decode()
        assert "Not set live: " in refused and "it has no consent text for its participants" in refused
        study.refresh_from_db()
        assert study.status == "draft"

    def test_the_state_buttons_need_the_change_permission(self, client):
        study = live_study(clips=3, status="draft")
        self.staff(client, "annotation.view_study")

        assert "annotation_study_status" not in client.get(reverse("admin:annotation_study_change", args=[study.pk]))
        assert client.post(reverse("admin:annotation_study_status", args=[study.pk, "live"])).status_code == 403

    def test_the_raw_export_is_asked_for_from_the_study_page(self, client, django_capture_on_commit_callbacks):
        study = StudyFactory()
        ClipFactory(corpus=study.corpus)
        self.staff(client, "annotation.view_study", "annotation.view_annotation", "evaluation.add_datasetexport")
        raw = reverse("admin:evaluation_datasetexport_raw", args=[study.pk])

        assert (
            f'action="{raw}"' in client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
        )
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(raw)
        export = DatasetExport.objects.get()
        assert response.status_code == 302 and response["Location"].endswith(f"/{export.pk}/change/")
        assert (export.format, export.study, export.include_prolific_ids) == ("raw", study, False)
        # Prolific ids need the participant permission, as the API asks.
        assert client.post(raw, {"prolific_ids": "yes"}).status_code == 403

    def test_without_the_annotation_permission_there_is_no_raw_export(self, client):
        study = StudyFactory()
        self.staff(client, "annotation.view_study", "evaluation.add_datasetexport")
        raw = reverse("admin:evaluation_datasetexport_raw", args=[study.pk])

        assert raw not in client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
        assert client.post(raw).status_code == 403
