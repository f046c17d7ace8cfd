"""The admin pages of issue 22: a quality bonus set up from the form, shown with its total, paid
by the button (needs pay_bonusbatch; a second click pays nothing more), the calls made for it;
the submissions list with "Poll Prolific now"; subscribing the webhooks."""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from prolific.models import BonusBatch, BonusPayJob, ProlificSubmission, ProlificWebhookSubscription
from tests.annotation.test_review import SmallStudy
from tests.prolific_fake.bonuses import pays_of
from tests.prolific_fake.submissions import submission_add, submission_status_set

pytestmark = pytest.mark.django_db


def staff(client, *codenames):
    user = User.objects.create_user("researcher", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client.force_login(user)
    return user


@pytest.fixture
def small(prolific_fake):
    study = SmallStudy()
    for person in study.study.participants.all():
        submission_add(
            prolific_fake,
            study_id=person.prolific_study_id,
            participant_id=person.prolific_pid,
            submission_id=person.prolific_session_id,
            status="AWAITING REVIEW",
        )
    return study


def test_a_quality_bonus_is_set_up_shown_with_its_total_and_paid_by_one_click(
    client,
    small,
    prolific_fake,
    django_capture_on_commit_callbacks,
):
    staff(client, "add_bonusbatch", "view_bonusbatch", "pay_bonusbatch")
    answer = client.post(
        reverse("admin:prolific_bonusbatch_add"),
        {"study": small.study.pk, "amount": "2.00", "min_kappa": "0.5", "reason": ""},
    )
    batch = BonusBatch.objects.get()
    assert answer.status_code == 302 and answer["Location"] == reverse(
        "admin:prolific_bonusbatch_change", args=[batch.pk]
    )
    page = client.get(answer["Location"]).content.decode()
    currency = small.study.reward_currency  # Prolific answered 800.0 cents: shown as the currency
    assert f"Prolific charges <strong data-total>8.00 {currency}</strong>" in page and "3 participant(s)" in page
    assert f"Pay 8.00 {currency} through Prolific</button>" in page and "submissions/bonus-payments/" in page

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:prolific_bonusbatch_pay", args=[batch.pk]))
        client.post(reverse("admin:prolific_bonusbatch_pay", args=[batch.pk]))  # a double click

    batch.refresh_from_db()
    assert batch.stage == BonusBatch.Stage.PAID and pays_of(prolific_fake, batch.prolific_bulk_id) == 1
    page = client.get(reverse("admin:prolific_bonusbatch_change", args=[batch.pk])).content.decode()
    assert "through Prolific</button>" not in page and "data-stage>Paid<" in page
    job = BonusPayJob.objects.get()
    progress = client.get(reverse("admin:prolific_bonusbatch_progress", args=[job.pk]), HTTP_HX_REQUEST="true")
    assert progress.status_code == 286


def test_paying_needs_pay_bonusbatch(client, small, prolific_fake):
    user = staff(client, "add_bonusbatch", "view_bonusbatch")
    client.post(reverse("admin:prolific_bonusbatch_add"), {"study": small.study.pk, "amount": "1", "min_kappa": "0.5"})
    batch = BonusBatch.objects.get(created_by=user)
    page = client.get(reverse("admin:prolific_bonusbatch_change", args=[batch.pk])).content.decode()
    assert "through Prolific</button>" not in page
    assert client.post(reverse("admin:prolific_bonusbatch_pay", args=[batch.pk])).status_code == 403
    assert not BonusPayJob.objects.exists() and pays_of(prolific_fake, batch.prolific_bulk_id) == 0


def test_creating_needs_add_bonusbatch_and_a_refusal_is_shown(client, small, prolific_fake):
    staff(client, "view_bonusbatch")
    assert client.get(reverse("admin:prolific_bonusbatch_add")).status_code == 403
    client.logout()
    User.objects.all().delete()
    staff(client, "add_bonusbatch", "view_bonusbatch")
    answer = client.post(
        reverse("admin:prolific_bonusbatch_add"), {"study": small.study.pk, "amount": "1", "min_kappa": "0.99"}
    )
    assert answer.status_code == 200 and "no participant qualifies for this bonus" in answer.content.decode()
    assert not BonusBatch.objects.exists()


def test_poll_prolific_now_releases_returned_work(client, small, prolific_fake):
    from annotation.models import Task

    staff(client, "change_participant", "view_prolificsubmission", "view_prolificcall")
    person = small.ana
    Task.objects.filter(participant=person).update(status=Task.Status.OPEN)
    submission_status_set(prolific_fake, person.prolific_session_id, "RETURNED", notify=False)
    listing = client.get(reverse("admin:prolific_prolificsubmission_changelist")).content.decode()
    assert "Poll Prolific now</button>" in listing
    answer = client.post(reverse("admin:prolific_prolificsubmission_poll"), follow=True)
    assert "1 task(s) released" in answer.content.decode()
    assert ProlificSubmission.objects.get(submission_id=person.prolific_session_id).released_task is not None
    listing = client.get(reverse("admin:prolific_prolificsubmission_changelist")).content.decode()
    calls_url = reverse("admin:prolific_prolificcall_changelist") + "?q=submissions"
    assert f'href="{calls_url}"' in listing
    calls = client.get(calls_url).content.decode()
    assert f"studies/{person.prolific_study_id}/submissions/" in calls  # the poll's call, in the call log


def test_webhooks_are_subscribed_from_the_admin(client, prolific_fake, settings):
    staff(client, "add_prolificwebhooksubscription", "view_prolificwebhooksubscription")
    form = client.get(reverse("admin:prolific_prolificwebhooksubscription_add")).content.decode()
    assert 'value="fake-workspace"' in form and "/prolific/webhooks/" in form
    refused = client.post(
        reverse("admin:prolific_prolificwebhooksubscription_add"),
        {"workspace_id": "fake-workspace", "target_url": "http://platform.example.org/prolific/webhooks/"},
    )
    assert "only calls https://" in refused.content.decode()
    answer = client.post(
        reverse("admin:prolific_prolificwebhooksubscription_add"),
        {"workspace_id": "fake-workspace", "target_url": "https://platform.example.org/prolific/webhooks/"},
    )
    assert answer.status_code == 302
    assert sorted(ProlificWebhookSubscription.objects.values_list("event_type", "confirmed")) == [
        ("study.status.change", True),
        ("submission.status.change", True),
    ]


def test_the_list_shows_each_batch_with_its_total(client, small, prolific_fake):
    staff(client, "add_bonusbatch", "view_bonusbatch")
    client.post(reverse("admin:prolific_bonusbatch_add"), {"study": small.study.pk, "amount": "2", "min_kappa": "0.5"})
    listing = client.get(reverse("admin:prolific_bonusbatch_changelist")).content.decode()
    assert (
        "Created at Prolific, not paid" in listing
        and "8.00" in listing
        and '<td class="field-line_count">3</td>' in listing
    )


def test_prolific_ids_in_bonuses_calls_and_webhooks_need_the_participant_permission(
    client,
    small,
    prolific_fake,
):
    from django.utils import timezone

    from annotation.participant_names import PROLIFIC_IDS_HIDDEN
    from prolific.client import ProlificClient
    from prolific.models import ProlificCall, ProlificWebhookReceipt
    from prolific.services.bonuses import bonus_batch_create

    everyone = small.study.participants.order_by("pk")
    people = [p for p in everyone if p.prolific_pid != p.prolific_study_id][:2]  # the factory's ids can coincide
    client_ = ProlificClient.from_settings(study=small.study)
    batch = bonus_batch_create(study=small.study, lines=[(p, 100) for p in people], reason="r", client=client_)
    receipt = ProlificWebhookReceipt.objects.create(
        signature="sig",
        signed_at=timezone.now(),
        event_type="submission.status.change",
        resource_id=people[0].prolific_session_id,
        status="RETURNED",
        payload={"participant_id": people[0].prolific_pid, "status": "RETURNED"},
    )
    pages = [
        reverse("admin:prolific_bonusbatch_change", args=[batch.pk]),
        reverse("admin:prolific_prolificwebhookreceipt_change", args=[receipt.pk]),
        *(
            reverse("admin:prolific_prolificcall_change", args=[pk])
            for pk in ProlificCall.objects.values_list("pk", flat=True)
        ),
    ]
    assert len(pages) > 2
    pids = [p.prolific_pid for p in people]
    codenames = ["view_bonusbatch", "view_prolificcall", "view_prolificwebhookreceipt"]

    viewer = User.objects.create_user("viewer", is_staff=True)
    viewer.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client.force_login(viewer)
    for url in pages:
        answer = client.get(url)
        page = answer.content.decode()
        assert answer.status_code == 200 and not [pid for pid in pids if pid in page], url
        assert PROLIFIC_IDS_HIDDEN in page or "bonusbatch" in url
    api = client.get(f"/api/v1/bonus-batches/{batch.pk}/").json()
    assert [sorted(line) for line in api["lines"]] == [["amount_cents", "id", "participant", "repeats"]] * 2

    reviewer = User.objects.create_user("reviewer", is_staff=True)
    reviewer.user_permissions.add(*Permission.objects.filter(codename__in=[*codenames, "change_participant"]))
    client.force_login(reviewer)
    shown = "".join(client.get(url).content.decode() for url in pages)
    assert all(pid in shown for pid in pids) and PROLIFIC_IDS_HIDDEN not in shown
    api = client.get(f"/api/v1/bonus-batches/{batch.pk}/").json()
    assert sorted(line["prolific_pid"] for line in api["lines"]) == sorted(pids)
