"""Listening-form scores from the database: a StressTest form taken by 3 simulated participants, the staff-only
report page, its progress while the scores are computed in the background, and its CSV and JSON
downloads (409 until the scores are ready)."""

import csv
import io
import json

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Annotation, ListeningFormItem, Participant, Study
from annotation.services.assignment import assignment_claim
from annotation.services.listening_forms import ListeningFormItemSpec
from annotation.services.submission import annotation_submit
from evaluation.models import ListeningFormReport
from evaluation.selectors.listening_form_reports import listening_form_report_data
from evaluation.services import listening_form_reports as services
from evaluation.services.listening_form_reports import listening_form_report_request
from tests.annotation.study_helpers import listened_to_all, live_form, live_study, ready_participant
from tests.audio_files import speechlike, write_audio

pytestmark = pytest.mark.django_db

SENTENCE = "I didn't say she stole the money"


def stresstest_folder(root, items: int):
    rows = []
    for n in range(items):
        write_audio(root / f"audio/{n:02d}.wav", speechlike(1.0, seed=n + 1))
        rows.append(
            {
                "id": f"st-{n:02d}",
                "transcription": SENTENCE,
                "audio": f"audio/{n:02d}.wav",
                "possible_answers": ["Someone else said it", "She took something else"],
                "label": n % 2,
                "stress_pattern": {"binary": [0, 1, 0, 0, 0, 0, 0], "indices": [1], "words": ["didn't"]},
                "metadata": {"half": "first" if n < items // 2 else "second"},
            }
        )
    (root / "items.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return root


def take_form(study: Study, answer) -> Participant:
    """One participant through a whole task, in the order the task gives; answer(form_item, task_item)."""
    participant = ready_participant(study)
    task = assignment_claim(participant=participant)
    for item in task.items.order_by("position").select_related("study_item__form_item"):
        listened_to_all(item)
        levels, response = answer(item.study_item.form_item, item)
        annotation_submit(
            participant_id=participant.pk, item_id=item.pk, levels=levels, response=response, mismatch=False
        )
    return participant


def test_stresstest_form_of_20_items_with_3_participants_matches_a_hand_count(tmp_path):
    call_command(
        "import_form_items", str(stresstest_folder(tmp_path / "st", 20)), "--study", "SSR", "--items-per-form", "20"
    )
    study = Study.objects.get(name="SSR")
    Study.objects.filter(pk=study.pk).update(status=Study.Status.LIVE)
    study.refresh_from_db()
    # Participant 0 is always right, participant 1 on even items, participant 2 on items divisible by 4.
    right = [lambda n: True, lambda n: n % 2 == 0, lambda n: n % 4 == 0]
    for rule in right:

        def answer(form_item, task_item, rule=rule):
            n = int(form_item.external_id[3:])
            return [], {"choice": form_item.gold if rule(n) else 1 - form_item.gold}

        take_form(study, answer)

    scores = listening_form_report_data(study=study)["single_choice"]

    # Hand count: 20 + 10 + 5 of 60 answers right. Majority of 3 (2 options: never a tie): even items
    # have participants 0 and 1 right (10 items right), odd items only participant 0 (wrong).
    assert (scores["accuracy"]["successes"], scores["accuracy"]["trials"]) == (35, 60)
    assert scores["accuracy"]["value"] == pytest.approx(35 / 60)
    assert (scores["majority_vote_accuracy"]["successes"], scores["majority_vote_accuracy"]["trials"]) == (10, 20)
    assert scores["tied_items"] == 0
    first, second = scores["by"]["half"]["first"], scores["by"]["half"]["second"]
    assert first["accuracy"]["successes"] + second["accuracy"]["successes"] == 35  # items 0-9: 10 + 5 + 3
    assert first["accuracy"]["successes"] == 18


def every_type(clips):
    return [
        ListeningFormItemSpec(
            "choice",
            ListeningFormItem.Type.SINGLE_CHOICE,
            clips[0],
            options=["x", "y", "z"],
            gold=1,
            metadata={"secret": "gold-is-y"},
        ),
        ListeningFormItemSpec(
            "pair", ListeningFormItem.Type.PAIRWISE, clips[1], second_clip=clips[2], settings={"allow_tie": True}
        ),
        ListeningFormItemSpec(
            "mos",
            ListeningFormItem.Type.RATING,
            clips[1],
            options=["Bad", "Poor", "Fair", "Good", "Excellent"],
            metadata={"system": "tts-a"},
        ),
        ListeningFormItemSpec(
            "warm",
            ListeningFormItem.Type.STANCE,
            clips[3],
            settings={"dimension": "warmth", "positive": "warm", "negative": "cold"},
        ),
        ListeningFormItemSpec("ssd", ListeningFormItem.Type.STRESSED_WORDS, clips[0], gold=[0, 0, 0, 1, 0, 0, 0]),
    ]


def answer_every_type(form_item, task_item):
    kind = ListeningFormItem.Type
    return {
        kind.SINGLE_CHOICE: ([], {"choice": 1}),
        kind.PAIRWISE: ([], {"prefer": "a"}),
        kind.RATING: ([], {"value": 4.0}),
        kind.STANCE: ([], {"pole": "P", "confidence": 0.5, "pole_order": task_item.presentation.get("pole_order")}),
        kind.STRESSED_WORDS: ([0, 0, 0, 1, 1, 0, 0], {}),
    }[form_item.item_type]


@pytest.fixture
def answered_form():
    study = live_form(specs=every_type, target_annotations=3)
    for _ in range(2):
        take_form(study, answer_every_type)
    return study


@pytest.fixture
def scored_form(answered_form, django_capture_on_commit_callbacks):
    """The form with its scores computed, as a worker would have after a first visit."""
    with django_capture_on_commit_callbacks(execute=True):
        listening_form_report_request(study=answered_form)
    return answered_form


def staff(*, can_view: bool, is_staff: bool = True) -> User:
    user = User.objects.create_user(f"user{User.objects.count()}", is_staff=is_staff)  # no password: no slow hashing
    if can_view:
        user.user_permissions.add(Permission.objects.get(codename="view_study", content_type__app_label="annotation"))
    return user


def test_the_page_shows_every_section_and_is_linked_from_the_study_admin(client, scored_form):
    client.force_login(staff(can_view=True))

    page = client.get(f"/admin/evaluation/listeningformreport/study/{scored_form.pk}/")

    assert page.status_code == 200
    text = page.content.decode()
    for heading in ("Single choice", "Stressed words", "Ratings", "Pairwise preference", "Stance", "Agreement"):
        assert f">{heading}</h2>" in text
    assert "counts as incorrect" in text and "under order PN than under NP" in text
    assert "Items lacking one order" in text and "<td>items_lacking_one_order</td>" in text
    assert "10 answers from 2 participants" in text
    superuser = User.objects.create_superuser("admin", password=None)
    client.force_login(superuser)
    change_page = client.get(f"/admin/annotation/study/{scored_form.pk}/change/").content.decode()
    assert f'href="/admin/evaluation/listeningformreport/study/{scored_form.pk}/"' in change_page


def test_no_link_and_no_page_for_an_emphasis_study(client):
    study = live_study()
    client.force_login(User.objects.create_superuser("admin", password=None))

    assert (
        "/admin/evaluation/listeningformreport/study/"
        not in client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    )
    assert client.get(f"/admin/evaluation/listeningformreport/study/{study.pk}/").status_code == 404


@pytest.mark.parametrize("suffix", ["", "scores.csv", "scores.json"])
def test_staff_only_and_with_the_view_permission(client, scored_form, suffix):
    url = f"/admin/evaluation/listeningformreport/study/{scored_form.pk}/{suffix}"

    anonymous = client.get(url)
    assert anonymous.status_code == 302 and "/admin/login/" in anonymous["Location"]
    client.force_login(staff(can_view=True, is_staff=False))  # a participant-side account, say
    assert client.get(url).status_code == 302
    client.force_login(staff(can_view=False))
    assert client.get(url).status_code == 403
    client.force_login(staff(can_view=True))
    assert client.get(url).status_code == 200


def test_json_download_holds_every_score(client, scored_form):
    client.force_login(staff(can_view=True))

    response = client.get(f"/admin/evaluation/listeningformreport/study/{scored_form.pk}/scores.json")

    assert response["Content-Disposition"] == f'attachment; filename="form-{scored_form.slug}-scores.json"'
    report = json.loads(response.content)
    assert report["answers"] == 10 and report["participants"] == 2
    assert report["single_choice"]["accuracy"]["value"] == 1.0
    assert report["stressed_words"]["pooled"]["precision"] == 0.5 and report["stressed_words"]["pooled"]["recall"] == 1
    assert report["rating"]["per_system"]["tts-a"]["mean"] == 4.0
    assert report["pairwise"]["overall"]["a"] == 2 and report["pairwise"]["overall"]["p_value"] == 0.5
    assert report["stance"]["per_dimension"]["warmth"]["score"]["mean"] == 0.5
    # The item's two listeners were given the two pole orders, one each.
    stance_answers = Annotation.objects.filter(item__study_item__form_item__item_type="stance")
    assert sorted(answer.response["pole_order"] for answer in stance_answers) == ["NP", "PN"]
    assert report["stance"]["per_dimension"]["warmth"]["disagreement"] == {
        "items_with_both_orders": 1,
        "disagreeing": 0,
        "rate": 0.0,
        "items_lacking_one_order": 0,
    }
    assert report["agreement"]["single_choice"]["kappa"] is None  # everyone chose y: kappa is 0/0
    assert report["agreement"]["stressed_words"]["units"] == 7


def test_csv_download_is_long_form_one_measure_a_row(client, scored_form):
    client.force_login(staff(can_view=True))

    response = client.get(f"/admin/evaluation/listeningformreport/study/{scored_form.pk}/scores.csv")

    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    by_measure = {(row["section"], row["group"], row["item"], row["measure"]): row for row in rows}
    accuracy = by_measure[("single_choice", "all", "", "accuracy")]
    assert (float(accuracy["value"]), accuracy["n"]) == (1.0, "2") and float(accuracy["ci95_low"]) < 1
    assert float(by_measure[("stressed_words", "pooled", "", "f1")]["value"]) == pytest.approx(2 / 3)
    assert float(by_measure[("rating", "system=tts-a", "", "mos")]["value"]) == 4.0
    assert float(by_measure[("pairwise", "all", "", "prefer_a")]["value"]) == 1.0
    assert by_measure[("stance", "warmth", "", "pole_order_disagreement")]["value"] == "0.0"  # both orders answered
    lacking = by_measure[("stance", "warmth", "", "items_lacking_one_order")]
    assert (lacking["value"], lacking["n"]) == ("0", "1")
    assert by_measure[("agreement", "single_choice", "", "fleiss_kappa")]["value"] == ""  # undefined


def test_rejected_participants_are_left_out(answered_form):
    Participant.objects.filter(pk=answered_form.participants.first().pk).update(decision=Participant.Decision.REJECTED)

    report = listening_form_report_data(study=answered_form)

    assert (report["answers"], report["answers_left_out_rejected"], report["participants"]) == (5, 5, 1)


# --- computed in the background: progress, failure, downloads before the scores are ready --------


def page_url(study) -> str:
    return reverse("admin:evaluation_listeningformreport_study", args=[study.pk])


def test_a_first_visit_queues_the_scores_and_shows_progress_until_the_worker_ran(
    client, answered_form, django_capture_on_commit_callbacks
):
    client.force_login(staff(can_view=True))

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        first = client.get(page_url(answered_form)).content.decode()
    job = ListeningFormReport.objects.get()
    progress_url = reverse("admin:evaluation_listeningformreport_progress", args=[job.pk])
    assert job.status == ListeningFormReport.Status.QUEUED and len(callbacks) == 1
    assert f'hx-get="{progress_url}"' in first and "every 1s" in first and "waiting for a worker" in first
    assert ">Single choice</h2>" not in first

    callbacks[0]()  # the eager task: the worker runs the job

    second = client.get(page_url(answered_form)).content.decode()
    assert ">Single choice</h2>" in second and "hx-get" not in second
    assert ListeningFormReport.objects.get().status == ListeningFormReport.Status.SUCCEEDED


def test_progress_polls_until_the_job_finishes_then_stops_with_286(client, answered_form):
    client.force_login(staff(can_view=True))
    job = listening_form_report_request(study=answered_form)  # queued: nothing committed, no worker ran
    url = reverse("admin:evaluation_listeningformreport_progress", args=[job.pk])

    waiting = client.get(url, HTTP_HX_REQUEST="true")
    assert waiting.status_code == 200 and f'hx-get="{url}"' in waiting.content.decode()

    ListeningFormReport.objects.filter(pk=job.pk).update(status=ListeningFormReport.Status.SUCCEEDED)
    finished = client.get(url, HTTP_HX_REQUEST="true")
    assert finished.status_code == 286 and finished["HX-Refresh"] == "true"
    assert "hx-get" not in finished.content.decode()


def test_progress_needs_the_view_permission(client, answered_form):
    job = listening_form_report_request(study=answered_form)
    url = reverse("admin:evaluation_listeningformreport_progress", args=[job.pk])

    client.force_login(staff(can_view=False))
    assert client.get(url).status_code == 403
    client.force_login(staff(can_view=True))
    assert client.get(reverse("admin:evaluation_listeningformreport_progress", args=[job.pk + 1])).status_code == 404


def test_a_failure_is_shown_with_its_message_and_tried_again_on_request(
    client, answered_form, django_capture_on_commit_callbacks, monkeypatch
):
    client.force_login(staff(can_view=True))
    monkeypatch.setattr(services, "listening_form_report_data", lambda *, study: 1 / 0)
    with django_capture_on_commit_callbacks(execute=True):
        client.get(page_url(answered_form))
    failed = ListeningFormReport.objects.get()
    assert (failed.status, failed.error) == (ListeningFormReport.Status.FAILED, "internal error: division by zero")

    page = client.get(page_url(answered_form)).content.decode()  # the same answers: not queued again
    assert "The scores could not be computed" in page and "internal error: division by zero" in page
    assert "Try again" in page and "hx-get" not in page
    assert ListeningFormReport.objects.count() == 1

    monkeypatch.undo()
    with django_capture_on_commit_callbacks(execute=True):
        retried = client.post(page_url(answered_form))
    assert retried.status_code == 302 and retried["Location"] == page_url(answered_form)
    assert ListeningFormReport.objects.first().status == ListeningFormReport.Status.SUCCEEDED
    assert ">Single choice</h2>" in client.get(page_url(answered_form)).content.decode()


@pytest.mark.parametrize("suffix", ["scores.csv", "scores.json"])
def test_a_download_before_the_scores_are_ready_answers_409(client, answered_form, suffix):
    client.force_login(staff(can_view=True))

    response = client.get(
        f"/admin/evaluation/listeningformreport/study/{answered_form.pk}/{suffix}"
    )  # queues the scores

    assert response.status_code == 409 and response["Retry-After"] == "5"
    assert "Content-Disposition" not in response
    text = response.content.decode()
    assert "not ready yet" in text and f"http://testserver{page_url(answered_form)}" in text
    assert ListeningFormReport.objects.get().status == ListeningFormReport.Status.QUEUED


def test_a_download_of_scores_that_failed_answers_409_with_the_error(client, answered_form):
    client.force_login(staff(can_view=True))
    job = listening_form_report_request(study=answered_form)
    ListeningFormReport.objects.filter(pk=job.pk).update(status=ListeningFormReport.Status.FAILED, error="disk full")

    response = client.get(f"/admin/evaluation/listeningformreport/study/{answered_form.pk}/scores.csv")

    assert response.status_code == 409 and "Retry-After" not in response
    assert "failed: disk full" in response.content.decode()


def test_the_json_download_is_the_stored_text(client, scored_form):
    client.force_login(staff(can_view=True))

    response = client.get(f"/admin/evaluation/listeningformreport/study/{scored_form.pk}/scores.json")

    assert response.content.decode() == ListeningFormReport.objects.get().result_json


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("/evaluation/forms/{pk}/", "/admin/evaluation/listeningformreport/study/{pk}/"),
        ("/evaluation/forms/{pk}/scores.csv", "/admin/evaluation/listeningformreport/study/{pk}/scores.csv"),
        ("/evaluation/suites/stresstest/{pk}/", "/admin/evaluation/suitereport/stresstest/{pk}/"),
        ("/evaluation/suites/cast/{pk}/scores.json", "/admin/evaluation/suitereport/cast/{pk}/scores.json"),
    ],
)
def test_the_score_pages_old_addresses_lead_to_the_admin(client, old, new):
    """The score pages live in the admin now; links from before (the docs, notes) still arrive."""
    response = client.get(old.format(pk=7) + "?language=de")

    assert response.status_code == 301 and response["Location"] == new.format(pk=7) + "?language=de"
