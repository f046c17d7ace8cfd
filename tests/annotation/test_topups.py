from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotation.models import Participant, PlaybackEvent, Study, StudyItem, Task, TaskItem
from annotation.services.assignment import NoTaskAvailable, assignment_claim, tasks_expire
from annotation.services.studies import ClipSelection, study_create
from annotation.services.submission import annotation_submit
from annotation.services.topups import places_needed, topup_open, topup_plan, topup_summary
from tests.annotation.factories import ClipFactory, CorpusFactory
from tests.annotation.study_helpers import handed_out_before


@pytest.mark.parametrize(
    ("missing", "clips_per_task", "expected"),
    [
        ([], 20, 0),
        ([0, 0], 20, 0),
        ([1] * 40, 20, 2),  # enough clips to fill whole tasks
        ([1] * 41, 20, 3),  # one annotation more needs a further task
        ([5], 20, 5),  # five different people for one clip
        ([5, 1, 1], 2, 5),
        ([3, 3, 3, 3], 2, 6),
    ],
)
def test_places_needed_is_the_larger_of_whole_tasks_and_the_most_missing_on_one_clip(missing, clips_per_task, expected):
    assert places_needed(missing, clips_per_task) == expected


# --- helpers: a live study over English and German clips, real claims and submissions

T0 = timezone.now()


def make_study(*, english=4, german=2, **settings) -> Study:
    corpus = CorpusFactory()
    for index in range(english + german):
        ClipFactory(corpus=corpus, language="en" if index < english else "de")
    settings = {
        "status": Study.Status.LIVE,
        "clips_per_task": 3,
        "target_annotations": 2,
        "attention_checks_per_task": 0,
        **settings,
    }
    return study_create(name=f"topup-{corpus.pk}", corpus=corpus, selection=ClipSelection(), **settings)


def claim(study: Study, *, now=T0) -> Task:
    return assignment_claim(participant=Participant.objects.create(study=study), now=now)


def complete(task: Task) -> None:
    """Listen to and submit every clip of the task, in order, as a participant would."""
    for item in task.items.order_by("position"):
        played = T0 + timedelta(seconds=10 * (item.position + 1))
        handed_out_before(item, played)
        PlaybackEvent.objects.bulk_create(
            [
                PlaybackEvent(item=item, kind="play", media_time=0, client_ms=0, received_at=played),
                PlaybackEvent(
                    item=item,
                    kind="ended",
                    media_time=item.duration,
                    client_ms=item.duration * 1000,
                    received_at=played + timedelta(seconds=item.duration),
                ),
            ]
        )
        levels = [1] + [0] * (item.word_count - 1)
        annotation_submit(
            participant_id=task.participant_id,
            item_id=item.pk,
            levels=levels,
            mismatch=False,
            now=played + timedelta(seconds=item.duration + 1),
        )


def drop_out() -> int:
    """Let every open task run past its time limit."""
    return tasks_expire(now=T0 + timedelta(days=1))


def rows(plan) -> dict:
    return {
        row.language: (row.clips_below_target, row.missing_annotations, row.places_needed)
        for row in [*plan.languages, plan.total]
    }


@pytest.mark.django_db
class TestPlan:
    def test_a_new_study_misses_every_annotation(self):
        study = make_study(places=4)

        plan = topup_plan(study=study)

        # en: 8 missing / 3 per task -> 3; de: 4 / 3 -> 2; all: 12 / 3 -> 4
        assert rows(plan) == {"en": (4, 8, 3), "de": (2, 4, 2), "all": (6, 12, 4)}
        assert (plan.places_taken, plan.places_free, plan.places_to_open) == (0, 4, 0)

    def test_reservations_are_not_missing_until_the_task_expires(self):
        study = make_study(places=4)
        complete(claim(study))
        complete(claim(study))
        claim(study)
        claim(study)  # every clip now has 1 completed + 1 reserved

        assert rows(topup_plan(study=study))["all"] == (0, 0, 0)

        assert drop_out() == 2

        # The drop-outs' 6 clips are missing again; their places were freed with them.
        plan = topup_plan(study=study)
        assert rows(plan) == {"en": (4, 4, 2), "de": (2, 2, 1), "all": (6, 6, 2)}
        assert (plan.places_taken, plan.places_free, plan.places_to_open) == (2, 2, 0)

    def test_clips_out_of_assignment_are_not_topped_up(self):
        study = make_study(places=4)
        StudyItem.objects.filter(study=study, clip__language="de").update(review=StudyItem.Review.NEEDS_REVIEW)
        first_english = StudyItem.objects.filter(study=study, clip__language="en").first()
        StudyItem.objects.filter(pk=first_english.pk).update(review=StudyItem.Review.EXCLUDED)

        assert rows(topup_plan(study=study)) == {"en": (3, 6, 2), "all": (3, 6, 2)}

    def test_one_clip_far_below_target_needs_that_many_people(self):
        study = make_study(english=1, german=0, clips_per_task=20, target_annotations=5, places=0)

        assert rows(topup_plan(study=study))["all"] == (1, 5, 5)


@pytest.mark.django_db
class TestOpen:
    def test_opens_exactly_the_missing_places_and_they_fill_every_clip(self):
        study = make_study(places=2)  # too few: 12 annotations need 4 tasks of 3
        complete(claim(study))
        complete(claim(study))
        with pytest.raises(NoTaskAvailable, match="places"):
            claim(study)

        opened = topup_open(study=study, now=T0)

        assert (opened.places_before, opened.places_after, opened.opened) == (2, 4, 2)
        study.refresh_from_db()
        assert study.places == 4
        complete(claim(study))
        complete(claim(study))
        assert set(StudyItem.objects.filter(study=study).values_list("completed_count", flat=True)) == {2}
        with pytest.raises(NoTaskAvailable):
            claim(study)

    def test_drop_outs_free_their_places_so_a_second_top_up_opens_nothing(self):
        study = make_study(places=2)
        complete(claim(study))
        complete(claim(study))
        topup_open(study=study, now=T0)
        study.refresh_from_db()
        claim(study)
        claim(study)

        opened = topup_open(study=study, now=T0 + timedelta(days=1))  # both new participants dropped out

        assert opened.expired_tasks == 2
        assert opened.opened == 0 and opened.plan.places_free == 2
        assert Study.objects.get(pk=study.pk).places == 4

    def test_a_study_without_place_limit_has_nothing_to_open(self):
        study = make_study(places=None)

        opened = topup_open(study=study)

        assert opened.opened == 0 and opened.places_after is None
        assert Study.objects.get(pk=study.pk).places is None


@pytest.mark.django_db
class TestCommands:
    def test_topup_prints_the_table_by_language_and_a_summary(self):
        study = make_study(places=3)
        complete(claim(study))
        complete(claim(study))

        out = StringIO()
        call_command("topup", study.slug, stdout=out)

        lines = out.getvalue().splitlines()
        assert lines[0].split() == [
            "language",
            "clips",
            "below",
            "target",
            "missing",
            "annotations",
            "places",
            "needed",
        ]
        table = {line.split()[0]: line.split()[1:] for line in lines[1:4]}
        assert table == {"de": ["2", "2", "1"], "en": ["4", "4", "2"], "all": ["6", "6", "2"]}
        assert lines[-1] == (
            f"{study.slug}: 6 annotation(s) missing on 6 clip(s); 2 place(s) needed, 1 of 3 free. 1 place(s) to open."
        )
        assert Study.objects.get(pk=study.pk).places == 3

    def test_topup_open_raises_places_by_the_missing_places(self):
        study = make_study(places=2)
        complete(claim(study))
        complete(claim(study))

        out = StringIO()
        call_command("topup", study.slug, "--open", stdout=out)

        assert Study.objects.get(pk=study.pk).places == 4
        assert out.getvalue().splitlines()[-1].endswith("Opened 2 place(s): places 2 -> 4.")

    def test_topup_refuses_an_unknown_study(self):
        with pytest.raises(CommandError, match="No study"):
            call_command("topup", "nope", stdout=StringIO())

    def test_expire_tasks_releases_overdue_tasks_of_every_study(self):
        tasks = [claim(make_study()), claim(make_study()), claim(make_study())]
        Task.objects.filter(pk__in=[tasks[0].pk, tasks[1].pk]).update(expires_at=timezone.now() - timedelta(minutes=1))

        out = StringIO()
        call_command("expire_tasks", stdout=out)

        assert out.getvalue().strip() == "2 task(s) expired."
        assert list(Task.objects.order_by("pk").values_list("status", flat=True)) == ["expired", "expired", "open"]
        assert not TaskItem.objects.filter(task__in=tasks[:2], status=TaskItem.Status.PENDING).exists()


@pytest.mark.django_db
class TestAdminView:
    @pytest.fixture
    def study(self):
        study = make_study(places=2)
        complete(claim(study))
        complete(claim(study))
        return study

    def url(self, study):
        return reverse("admin:annotation_study_topup", args=[study.pk])

    def test_shows_the_table_and_opens_places(self, admin_client, study):
        page = admin_client.get(self.url(study)).content.decode()
        assert "<td>en</td><td>4</td><td>4</td><td>2</td>" in page
        assert "<td>de</td><td>2</td><td>2</td><td>1</td>" in page
        assert 'value="Open 2 places"' in page
        change_page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
        assert self.url(study) in change_page

        response = admin_client.post(self.url(study), follow=True)

        assert Study.objects.get(pk=study.pk).places == 4
        assert "Opened 2 place(s): places 2 -&gt; 4." in response.content.decode()

    def test_needs_view_permission_to_look_and_change_permission_to_open(self, client, study):
        user = User.objects.create_user("curator", password="pw", is_staff=True)
        client.force_login(user)
        assert client.get(self.url(study)).status_code == 403

        user.user_permissions.add(Permission.objects.get(codename="view_study"))
        page = client.get(self.url(study))
        assert page.status_code == 200 and "Open 2 places" not in page.content.decode()
        assert client.post(self.url(study)).status_code == 403
        assert Study.objects.get(pk=study.pk).places == 2


@pytest.mark.django_db
def test_form_studies_count_items_as_the_page_says():
    from annotation.models import ListeningFormItem
    from annotation.services.listening_forms import ListeningFormItemSpec
    from tests.annotation.study_helpers import live_form

    def two_questions_per_clip(clips):
        specs = []
        for index, clip in enumerate(clips[:3]):
            specs.append(
                ListeningFormItemSpec(
                    f"c{index}", ListeningFormItem.Type.SINGLE_CHOICE, clip, options=["x", "y"], gold=0
                )
            )
            specs.append(ListeningFormItemSpec(f"s{index}", ListeningFormItem.Type.STRESSED_WORDS, clip))
        specs.append(
            ListeningFormItemSpec(
                "check",
                ListeningFormItem.Type.SINGLE_CHOICE,
                clips[3],
                options=["x", "y"],
                gold=1,
                settings={"attention_check": True},
            )
        )
        return specs

    study = live_form(specs=two_questions_per_clip, clips_per_task=6, target_annotations=2, places=0)

    plan = topup_plan(study=study)

    # Six questions below target (the attention check is answered by everyone and never topped up).
    assert rows(plan)["all"] == (6, 12, 2)
    summary = topup_summary(plan)
    assert summary.startswith("12 answer(s) missing on 6 item(s); 2 place(s) needed") and "clip" not in summary
    # The study page says the same, counting the form's items (its check item apart).
    from annotation.selectors.study_shortfall import shortfall_text, study_shortfall

    assert shortfall_text(study_shortfall(study=study)).startswith(
        "Not complete: 12 answer(s) missing on 6 of 6 item(s): 12 not yet handed out"
    )
