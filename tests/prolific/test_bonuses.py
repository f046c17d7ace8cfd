"""Bonus batches paid through Prolific exactly once (issue 22), against the contract fake, whose
pay call pays again every time it is called: only our side keeps it to one.

The job runs eagerly here (its on-commit send executed at once); the worker killed between
"created" and "paid" is tests/prolific/test_bonus_worker_killed.py."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission, User

from prolific.client import ProlificClient
from prolific.models import BonusBatch, BonusPayJob, ProlificCall
from prolific.services import bonuses as prolific_bonuses
from prolific.services.bonuses import (
    BonusRefused,
    bonus_batch_create,
    bonus_batch_pay,
    quality_bonus_lines,
)
from tests.annotation.factories import ParticipantFactory, StudyFactory
from tests.annotation.test_review import SmallStudy
from tests.prolific_fake.bonuses import pays_of
from tests.prolific_fake.fixtures import prolific_fake  # noqa: F401 (a fixture)
from tests.prolific_fake.submissions import submission_add

pytestmark = pytest.mark.django_db
Stage = BonusBatch.Stage
PAY = r"bulk-bonus-payments/[^/]+/pay/"


def taking_part(fake, participants):
    for person in participants:
        submission_add(
            fake,
            study_id=person.prolific_study_id,
            participant_id=person.prolific_pid,
            submission_id=person.prolific_session_id,
            status="APPROVED",
        )


@pytest.fixture
def batch(prolific_fake):  # noqa: F811
    study = StudyFactory()
    people = [ParticipantFactory(study=study) for _ in range(2)]
    taking_part(prolific_fake, people)
    client = ProlificClient.from_settings(study=study)
    return bonus_batch_create(
        study=study, lines=[(p, Decimal("1.50")) for p in people], reason="quality bonus", client=client
    )


def bonuses_at_prolific(fake) -> list[list[int]]:
    return [s["bonus_payments"] for s in fake.state["submissions"].values()]


def pay(batch, capture) -> BonusPayJob:
    with capture(execute=True):
        job = bonus_batch_pay(batch=batch)
    job.refresh_from_db()
    batch.refresh_from_db()
    return job


def test_a_batch_is_set_up_at_prolific_with_its_total_and_nothing_is_paid(prolific_fake, batch):  # noqa: F811
    assert (batch.stage, batch.amount, batch.fees, batch.total_amount) == (
        Stage.CREATED,
        Decimal("3.00"),
        Decimal("1.00"),
        Decimal("4.00"),
    )
    assert [line.amount for line in batch.lines.all()] == [Decimal("1.50")] * 2
    [setup] = prolific_fake.bodies("POST", r"submissions/bonus-payments/")
    people = [line.prolific_pid for line in batch.lines.all()]
    assert setup == {"study_id": batch.prolific_study_id, "csv_bonuses": f"{people[0]},1.50\n{people[1]},1.50"}
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 0 and bonuses_at_prolific(prolific_fake) == [[], []]


def test_paying_pays_once_and_the_batch_says_so(prolific_fake, batch, django_capture_on_commit_callbacks):  # noqa: F811
    job = pay(batch, django_capture_on_commit_callbacks)

    assert (job.status, batch.stage) == (BonusPayJob.Status.SUCCEEDED, Stage.PAID)
    assert batch.paid_how.startswith("Prolific accepted the payment")
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 1
    assert bonuses_at_prolific(prolific_fake) == [[150], [150]]
    # The call log keeps the one pay call, under the study.
    assert ProlificCall.objects.filter(study=batch.study, path__endswith="/pay/").count() == 1
    with pytest.raises(BonusRefused, match="paid already"):
        bonus_batch_pay(batch=batch)


def test_a_double_submit_queues_one_job_and_pays_once(client, prolific_fake, batch, django_capture_on_commit_callbacks):  # noqa: F811
    user = User.objects.create_user("researcher", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_bonusbatch", "pay_bonusbatch"]))
    client.force_login(user)
    url = f"/api/v1/bonus-batches/{batch.pk}/pay/"
    with django_capture_on_commit_callbacks(execute=False) as sends:
        first, second = client.post(url), client.post(url)  # two clicks before any worker ran

    assert (first.status_code, second.status_code) == (202, 202)
    assert first.json()["id"] == second.json()["id"] and BonusPayJob.objects.count() == 1
    for send in sends:  # both requests' sends reach the worker: the claim runs the job once
        send()
    batch.refresh_from_db()
    assert batch.stage == Stage.PAID and pays_of(prolific_fake, batch.prolific_bulk_id) == 1
    third = client.post(url)
    assert third.status_code == 409 and "paid already" in third.json()["detail"]
    assert len(prolific_fake.calls_to("POST", PAY)) == 1


def test_paying_needs_its_own_permission(client, batch):
    user = User.objects.create_user("viewer", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_bonusbatch"))
    client.force_login(user)
    assert client.get(f"/api/v1/bonus-batches/{batch.pk}/").json()["total_amount"] == "4.00"
    assert client.post(f"/api/v1/bonus-batches/{batch.pk}/pay/").status_code == 403
    assert not BonusPayJob.objects.exists()


def test_a_timeout_after_prolific_accepted_the_pay_call_is_reconciled_not_paid_again(
    prolific_fake,  # noqa: F811
    batch,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.PROLIFIC_TIMEOUT_SECONDS = 0.5
    prolific_fake.state["pay_stall_seconds"] = 3  # carried out at once, answered after the client gave up

    job = pay(batch, django_capture_on_commit_callbacks)

    assert (job.status, job.attempts, batch.stage) == (BonusPayJob.Status.SUCCEEDED, 2, Stage.PAID)
    assert batch.paid_how == "reconciled: Prolific shows every bonus of the batch"
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 1 and bonuses_at_prolific(prolific_fake) == [[150], [150]]
    [pay_call] = ProlificCall.objects.filter(path__endswith="/pay/")
    assert pay_call.status == 0 and "Timeout" in pay_call.error  # recorded as the answer that never came
    assert len(prolific_fake.calls_to("POST", PAY)) == 1


def test_a_lost_answer_after_the_payment_is_reconciled(prolific_fake, batch, django_capture_on_commit_callbacks):  # noqa: F811
    prolific_fake.fail("POST", PAY, 502, after_handling=True)  # paid, then the answer is a 502

    job = pay(batch, django_capture_on_commit_callbacks)

    assert (job.status, batch.stage) == (BonusPayJob.Status.SUCCEEDED, Stage.PAID)
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 1 and len(prolific_fake.calls_to("POST", PAY)) == 1


def test_a_pay_call_whose_fate_is_unknown_is_never_sent_again(
    prolific_fake,  # noqa: F811
    batch,
    django_capture_on_commit_callbacks,
):
    prolific_fake.fail("POST", PAY, 502)  # not carried out, but we cannot know that from a 502

    job = pay(batch, django_capture_on_commit_callbacks)

    assert job.status == BonusPayJob.Status.FAILED and job.attempts == BonusPayJob.MAX_ATTEMPTS
    assert "It is not sent again" in job.error and batch.stage == Stage.PAYING
    assert len(prolific_fake.calls_to("POST", PAY)) == 1 and pays_of(prolific_fake, batch.prolific_bulk_id) == 0
    # Paying again only reconciles: once the researcher has seen to it at Prolific, it is confirmed.
    prolific_fake.state["bonus_batches"][batch.prolific_bulk_id]["pays"] += 1
    for submission in prolific_fake.state["submissions"].values():
        submission["bonus_payments"].append(150)  # paid by hand in Prolific's web app
    job = pay(batch, django_capture_on_commit_callbacks)
    assert (job.status, batch.stage) == (BonusPayJob.Status.SUCCEEDED, Stage.PAID)
    assert len(prolific_fake.calls_to("POST", PAY)) == 1


def test_a_refusal_pays_nothing_and_leaves_the_batch_to_pay_again(
    prolific_fake,  # noqa: F811
    batch,
    django_capture_on_commit_callbacks,
):
    prolific_fake.fail(
        "POST", PAY, 400, body={"error": {"status": 400, "title": "Bad", "detail": "Insufficient funds"}}
    )

    job = pay(batch, django_capture_on_commit_callbacks)

    assert job.status == BonusPayJob.Status.FAILED and "Insufficient funds" in job.error
    assert (batch.stage, batch.pay_sent_at) == (Stage.CREATED, None)
    job = pay(batch, django_capture_on_commit_callbacks)
    assert batch.stage == Stage.PAID and pays_of(prolific_fake, batch.prolific_bulk_id) == 1


def test_a_second_worker_on_a_batch_whose_call_went_out_only_reconciles(prolific_fake, batch):  # noqa: F811
    # As if another worker had taken the call (CREATED -> PAYING) and then died before any answer.
    BonusBatch.objects.filter(pk=batch.pk).update(stage=Stage.PAYING)
    job = BonusPayJob.objects.create(batch=batch, status=BonusPayJob.Status.RUNNING, attempts=1)
    with pytest.raises(prolific_bonuses.JobRetry, match="does not show the bonus of 2 of 2"):
        prolific_bonuses._pay(job, lambda *args: None)
    assert prolific_fake.calls_to("POST", PAY) == []


def second_batch(batch) -> BonusBatch:
    """Another batch of the same Prolific study, for the same participants."""
    people = [line.participant for line in batch.lines.all()]
    client = ProlificClient.from_settings(study=batch.study)
    return bonus_batch_create(
        study=batch.study, lines=[(p, Decimal("1.50")) for p in people], reason="again", client=client
    )


def test_a_pay_call_waits_while_another_batch_of_the_study_is_paying(
    prolific_fake,  # noqa: F811
    batch,
    django_capture_on_commit_callbacks,
):
    other = second_batch(batch)
    prolific_fake.fail("POST", PAY, 502)  # the first batch's pay call: its fate unknown, PAYING
    pay(batch, django_capture_on_commit_callbacks)
    assert batch.stage == Stage.PAYING and len(prolific_fake.calls_to("POST", PAY)) == 1

    job = pay(other, django_capture_on_commit_callbacks)

    assert job.status == BonusPayJob.Status.FAILED and other.stage == Stage.CREATED
    assert f"bonus batch #{batch.pk} of the same Prolific study is being paid" in job.error
    assert "nothing was sent for this batch" in job.error
    assert len(prolific_fake.calls_to("POST", PAY)) == 1 and pays_of(prolific_fake, other.prolific_bulk_id) == 0


def test_reconciling_never_takes_another_paying_batchs_bonus_for_its_own(prolific_fake, batch):  # noqa: F811
    # Both batches' pay calls went out and their answers were lost; only the first one was paid.
    other = second_batch(batch)
    prolific_fake.state["bonus_batches"][batch.prolific_bulk_id]["pays"] += 1
    for submission in prolific_fake.state["submissions"].values():
        submission["bonus_payments"].append(150)  # the first batch's bonus, as Prolific shows it
    BonusBatch.objects.filter(pk__in=[batch.pk, other.pk]).update(stage=Stage.PAYING)
    job = BonusPayJob.objects.create(batch=other, status=BonusPayJob.Status.RUNNING, attempts=1)

    with pytest.raises(prolific_bonuses.JobRetry, match="does not show the bonus of 2 of 2"):
        prolific_bonuses._pay(job, lambda *args: None)

    other.refresh_from_db()
    assert other.stage == Stage.PAYING and prolific_fake.calls_to("POST", PAY) == []


def test_the_quality_bonus_goes_to_who_agrees_with_the_others(prolific_fake):  # noqa: F811
    small = SmallStudy()
    everyone = [small.ana, small.ben, small.cleo, small.dan, small.eve, small.fay]
    for person in everyone:
        person.refresh_from_db()
    lines = quality_bonus_lines(study=small.study, amount=Decimal("2.00"), min_kappa=0.5)
    assert sorted(p.pk for p, _ in lines) == sorted(p.pk for p in (small.ana, small.ben, small.cleo))
    taking_part(prolific_fake, everyone)
    batch = bonus_batch_create(study=small.study, lines=lines, reason="quality", client=ProlificClient.from_settings())
    assert (batch.amount, batch.total_amount) == (Decimal("6.00"), Decimal("8.00"))


def test_bad_batches_are_refused_naming_the_problem(prolific_fake):  # noqa: F811
    study = StudyFactory()
    anonymous = ParticipantFactory(study=study, prolific_pid="")
    client = ProlificClient.from_settings()
    with pytest.raises(BonusRefused, match="no participant qualifies"):
        bonus_batch_create(study=study, lines=[], reason="", client=client)
    with pytest.raises(BonusRefused, match="came without a Prolific id"):
        bonus_batch_create(study=study, lines=[(anonymous, Decimal(1))], reason="", client=client)
    stranger = ParticipantFactory(study=study)  # not a participant of the study at Prolific
    with pytest.raises(Exception, match="has not taken part in the study"):
        bonus_batch_create(study=study, lines=[(stranger, Decimal(1))], reason="", client=client)
    assert not BonusBatch.objects.exists()


def test_the_cost_so_far_counts_the_bonuses_paid(prolific_fake, batch, django_capture_on_commit_callbacks):  # noqa: F811
    from prolific.selectors.bonuses import bonuses_paid_cents

    assert bonuses_paid_cents(study=batch.study) == 0  # set up, not paid
    pay(batch, django_capture_on_commit_callbacks)
    assert bonuses_paid_cents(study=batch.study) == 300
