"""Decisions sent to Prolific by a background job: queued by the review page, run by the worker,
its progress polled and its outcome shown on the page. Against the local imitation of Prolific."""

import pytest
from django.contrib.auth.models import Permission, User
from django.db import IntegrityError
from django.urls import reverse

from annotation.services.review import participants_decide
from prolific.models import ProlificSendJob
from prolific.services import send as prolific_send
from prolific.services.send import prolific_decisions_send_create
from tests.annotation.factories import ParticipantFactory, StudyFactory
from tests.prolific.test_client import prolific  # noqa: F401 (the contract fake of Prolific, a fixture)
from tests.prolific_fake.submissions import took_part

pytestmark = pytest.mark.django_db
Status = ProlificSendJob.Status


@pytest.fixture
def reviewer(client):
    user = User.objects.create_user("researcher", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="change_participant"))
    client.force_login(user)
    return user


@pytest.fixture
def decided(prolific):  # noqa: F811 (the fixture imported above)
    """A study with two approvals waiting to be sent, both known to Prolific."""
    study = StudyFactory()
    participants = [ParticipantFactory(study=study) for _ in range(2)]
    for participant in participants:
        took_part(prolific, participant)
    participants_decide(participants=participants, decision="approved")
    return study


def review_url(study) -> str:
    return reverse("admin:annotation_participant_review", args=[study.pk])


def progress_url(job) -> str:
    return reverse("admin:annotation_participant_send_progress", args=[job.pk])


def test_a_send_is_queued_after_commit_and_the_worker_records_the_outcome(decided, django_capture_on_commit_callbacks):
    user = User.objects.create_user("researcher")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = prolific_decisions_send_create(study=decided, user=user)
    assert job.status == Status.QUEUED and len(callbacks) == 1
    assert not decided.participants.filter(decision_sent_at__isnull=False).exists()

    callbacks[0]()  # the eager task runs here, as a worker would after the commit

    job.refresh_from_db()
    names = [p.prolific_pid for p in decided.participants.order_by("created_at", "pk")]
    assert (job.status, job.sent, job.failed, job.skipped) == (Status.SUCCEEDED, names, [], [])
    assert (job.done, job.total, job.created_by) == (2, 2, user)
    assert not decided.participants.filter(decision_sent_at__isnull=True).exists()


def test_the_page_polls_a_send_under_way_and_stops_with_286_when_it_finished(client, reviewer, decided):
    job = prolific_decisions_send_create(study=decided, user=reviewer)  # queued: no commit, no worker yet

    page = client.get(review_url(decided)).content.decode()
    assert f'hx-get="{progress_url(job)}"' in page and "waiting for a worker" in page
    assert "Send 2 decisions to Prolific</button>" in page and "disabled>Send 2" in page  # one send at a time
    waiting = client.get(progress_url(job), HTTP_HX_REQUEST="true")
    assert waiting.status_code == 200 and "hx-get" in waiting.content.decode()

    prolific_send.prolific_decisions_send_run(job_id=job.pk)  # the worker

    finished = client.get(progress_url(job), HTTP_HX_REQUEST="true")
    assert finished.status_code == 286 and finished["HX-Refresh"] == "true"
    assert "Sent to Prolific:" in finished.content.decode() and "hx-get" not in finished.content.decode()
    page = client.get(review_url(decided)).content.decode()
    assert "Last sent to Prolific" in page and "by researcher" in page and "hx-get" not in page


def test_a_second_send_while_one_is_under_way_gets_that_one(decided):
    first = prolific_decisions_send_create(study=decided)

    assert prolific_decisions_send_create(study=decided).pk == first.pk
    with pytest.raises(IntegrityError):  # and two requests at once cannot both queue one
        ProlificSendJob.objects.create(study=decided)


def test_a_token_removed_before_the_worker_ran_fails_the_send_with_its_message(
    client, reviewer, decided, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        client.post(reverse("admin:annotation_participant_send", args=[decided.pk]))
    settings.PROLIFIC_API_TOKEN = ""
    callbacks[0]()

    job = ProlificSendJob.objects.get()
    assert (job.status, job.error) == (Status.FAILED, "PROLIFIC_API_TOKEN is not set: nothing was sent.")
    page = client.get(review_url(decided)).content.decode()
    assert "Sending failed: PROLIFIC_API_TOKEN is not set: nothing was sent." in page
    assert not decided.participants.filter(decision_sent_at__isnull=False).exists()


def test_a_crash_fails_the_send_and_the_page_says_why(
    client, reviewer, decided, monkeypatch, django_capture_on_commit_callbacks
):
    def broken(**kwargs):
        raise RuntimeError("connection pool exhausted")

    monkeypatch.setattr(prolific_send, "participant_decisions_send", broken)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:annotation_participant_send", args=[decided.pk]))

    assert ProlificSendJob.objects.get().status == Status.FAILED
    assert (
        "Sending failed: internal error: connection pool exhausted" in client.get(review_url(decided)).content.decode()
    )

    monkeypatch.undo()  # a send that failed can simply be started again
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:annotation_participant_send", args=[decided.pk]))
    assert ProlificSendJob.objects.first().status == Status.SUCCEEDED


def test_following_a_send_needs_change_participant(client, decided):
    job = prolific_decisions_send_create(study=decided)
    viewer = User.objects.create_user("viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_participant"))
    client.force_login(viewer)

    assert client.get(progress_url(job)).status_code == 403


def test_the_admin_lists_sends_read_only(admin_client, decided, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = prolific_decisions_send_create(study=decided)

    listing = admin_client.get(reverse("admin:prolific_prolificsendjob_changelist"))
    detail = admin_client.get(reverse("admin:prolific_prolificsendjob_change", args=[job.pk]))

    assert listing.status_code == 200 and str(decided) in listing.content.decode()
    assert detail.status_code == 200 and 'name="_save"' not in detail.content.decode()
    assert admin_client.get(reverse("admin:prolific_prolificsendjob_add")).status_code == 403
