"""Bonus batches paid through Prolific exactly once (issues 22 and 30), against the contract fake
(tests/prolific_fake), written from Prolific's documentation: it answers the set-up in cents, accepts
the pay call with 202 and pays later (its submissions' bonus_payments, in cents, show it once paid),
and pays again on every pay call: only our side keeps it to one.

Jobs run eagerly here (their on-commit sends executed at once); `attempt` runs one attempt of a job
and hands back the retry it queued, to look at a batch between two readings of Prolific's record.
The worker killed between "created" and "paid" is tests/prolific/test_bonus_worker_killed.py."""

import time
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from prolific.client import ProlificClient
from prolific.models import BonusBatch, BonusLine, BonusPayJob, ProlificCall
from prolific.selectors.bonuses import bonuses_paid_cents
from prolific.services import bonuses as prolific_bonuses
from prolific.services.bonuses import (
    BonusAlreadyGiven,
    BonusRefused,
    bonus_batch_create,
    bonus_batch_pay,
    bonus_batch_recover,
    quality_bonus_lines,
)
from tests.annotation.factories import ParticipantFactory, StudyFactory
from tests.annotation.test_review import SmallStudy
from tests.prolific_fake.bonuses import payment_fail, pays_of
from tests.prolific_fake.submissions import took_part

pytestmark = pytest.mark.django_db
Stage = BonusBatch.Stage
PAY = r"bulk-bonus-payments/[^/]+/pay/"
SETUP = r"submissions/bonus-payments/"


def create(study, people, cents=150, *, reason="quality bonus", repeat=False) -> BonusBatch:
    client = ProlificClient.from_settings(study=study)
    return bonus_batch_create(
        study=study, lines=[(p, cents) for p in people], reason=reason, client=client, repeat=repeat
    )


@pytest.fixture
def people(prolific_fake):
    study = StudyFactory()
    found = [ParticipantFactory(study=study) for _ in range(2)]
    for person in found:
        took_part(prolific_fake, person, status="APPROVED")
    return found


@pytest.fixture
def batch(people):
    return create(people[0].study, people)


def bonuses_at_prolific(fake) -> list[list[float]]:
    from tests.prolific_fake.bonuses import payments_settle

    payments_settle(fake)
    return [s["bonus_payments"] for s in fake.state["submissions"].values()]


def pay(batch, capture) -> BonusPayJob:
    """Queue the payment and run its job to the end, retries included (eagerly)."""
    with capture(execute=True):
        job = bonus_batch_pay(batch=batch)
    job.refresh_from_db()
    batch.refresh_from_db()
    return job


def attempt(capture, send) -> list:
    """Run one attempt of a job (its on-commit send); the sends it queued (a retry), not run."""
    with capture(execute=False) as queued:
        send()
    return list(queued)


def settle_now(fake) -> None:
    for payment in fake.state.get("payments_due", []):
        payment["due"] = time.monotonic()


# --- cents ----------------------------------------------------------------------------------------


def test_a_batch_is_set_up_in_cents_and_its_csv_in_the_studys_currency(prolific_fake, batch):
    # Prolific answers in cents: 300 of bonus, a third of it in fees (rules.BONUS_AMOUNTS_IN_CENTS).
    assert (batch.stage, batch.amount_cents, batch.fees_cents, batch.total_cents) == (
        Stage.CREATED,
        300,
        Decimal("100.00"),
        Decimal("400.00"),
    )
    assert [line.amount_cents for line in batch.lines.all()] == [150, 150]
    [setup] = prolific_fake.bodies("POST", SETUP)
    ids = [line.prolific_pid for line in batch.lines.all()]
    assert setup == {"study_id": batch.prolific_study_id, "csv_bonuses": f"{ids[0]},1.50\n{ids[1]},1.50"}
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 0 and bonuses_at_prolific(prolific_fake) == [[], []]


def test_the_admin_shows_prolifics_cents_as_the_study_currency(client, prolific_fake, batch):
    """The pay button says what Prolific takes: 4.00, not 400 (main read Prolific's cents as currency)."""
    client.force_login(User.objects.create_superuser("boss"))
    page = client.get(reverse("admin:prolific_bonusbatch_change", args=[batch.pk])).content.decode()
    currency = batch.study.reward_currency
    assert f"Pay 4.00 {currency} through Prolific" in page
    assert f"<strong data-total>4.00 {currency}</strong>" in page
    assert "400.00" not in page


def test_the_docs_example_of_a_set_up_is_read_as_cents(prolific_fake):
    """Prolific's own example (create-bonus-payments): amount 850, fees 283.34, total 1133.34 cents."""
    study = StudyFactory()
    person = ParticipantFactory(study=study)
    took_part(prolific_fake, person, status="APPROVED")
    batch = create(study, [person], cents=850)
    assert (batch.amount_cents, batch.fees_cents, batch.total_cents) == (850, Decimal("283.34"), Decimal("1133.34"))
    [setup] = prolific_fake.bodies("POST", SETUP)
    assert setup["csv_bonuses"].endswith(",8.50")


# --- paid only when Prolific's record shows it -------------------------------------------------------


def test_a_batch_is_paid_only_once_prolifics_record_shows_it(
    prolific_fake,
    batch,
    django_capture_on_commit_callbacks,
):
    prolific_fake.state["pay_settle_seconds"] = 3600  # accepted now, paid "in the following minutes"
    with django_capture_on_commit_callbacks(execute=False) as sends:
        job = bonus_batch_pay(batch=batch)
    [retry] = attempt(django_capture_on_commit_callbacks, sends[0])

    batch.refresh_from_db()
    job.refresh_from_db()
    assert (batch.stage, job.status) == (Stage.PAYING, BonusPayJob.Status.QUEUED)  # accepted (202), not paid
    assert batch.pay_accepted_at is not None and batch.paid_at is None
    assert "does not show the bonus of 2 of 2" in job.error
    assert [call["path"] for call in prolific_fake.calls_to("POST", PAY)] and pays_of(
        prolific_fake, batch.prolific_bulk_id
    ) == 1
    assert bonuses_paid_cents(study=batch.study) == 0

    settle_now(prolific_fake)  # Prolific has paid
    with django_capture_on_commit_callbacks(execute=True):
        retry()
    batch.refresh_from_db()
    job.refresh_from_db()
    assert (batch.stage, job.status) == (Stage.PAID, BonusPayJob.Status.SUCCEEDED)
    assert batch.paid_how == "Prolific's record shows every bonus of the batch" and batch.overpaid_cents == 0
    assert bonuses_at_prolific(prolific_fake) == [[150.0], [150.0]] and len(prolific_fake.calls_to("POST", PAY)) == 1
    assert bonuses_paid_cents(study=batch.study) == 300


def test_a_payment_accepted_but_never_made_is_reported_and_not_sent_again(
    prolific_fake,
    batch,
    django_capture_on_commit_callbacks,
):
    payment_fail(prolific_fake, batch.prolific_bulk_id)  # Prolific accepts, then the payment fails there

    job = pay(batch, django_capture_on_commit_callbacks)

    assert (job.status, job.attempts, batch.stage) == (
        BonusPayJob.Status.FAILED,
        BonusPayJob.MAX_ATTEMPTS,
        Stage.PAYING,
    )
    assert "Prolific accepted the payment" in job.error and "may have failed at Prolific" in job.error
    assert len(prolific_fake.calls_to("POST", PAY)) == 1 and bonuses_at_prolific(prolific_fake) == [[], []]


def test_paying_pays_once_and_the_batch_says_so(prolific_fake, batch, django_capture_on_commit_callbacks):
    job = pay(batch, django_capture_on_commit_callbacks)

    assert (job.status, batch.stage) == (BonusPayJob.Status.SUCCEEDED, Stage.PAID)
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 1
    assert bonuses_at_prolific(prolific_fake) == [[150.0], [150.0]]
    # The call log keeps the one pay call, under the study, with Prolific's 202.
    [pay_call] = ProlificCall.objects.filter(study=batch.study, path__endswith="/pay/")
    assert pay_call.status == 202
    with pytest.raises(BonusRefused, match="paid already"):
        bonus_batch_pay(batch=batch)


def test_an_overpayment_is_flagged(prolific_fake, batch, django_capture_on_commit_callbacks):
    first = next(iter(prolific_fake.state["submissions"].values()))
    first["bonus_payments"].append(150.0)  # paid by hand in Prolific's web app beforehand

    pay(batch, django_capture_on_commit_callbacks)

    assert batch.stage == Stage.PAID and batch.overpaid_cents == Decimal("150.00")
    assert "1.50 more than the study's batches paid, on 1 participant(s)" in batch.paid_how


# --- lost answers and recovery ------------------------------------------------------------------------


def test_a_timeout_after_prolific_accepted_the_pay_call_is_reconciled_not_paid_again(
    prolific_fake,
    batch,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.PROLIFIC_TIMEOUT_SECONDS = 0.5
    prolific_fake.state["pay_stall_seconds"] = 3  # carried out at once, answered after the client gave up

    job = pay(batch, django_capture_on_commit_callbacks)

    assert (job.status, job.attempts, batch.stage) == (BonusPayJob.Status.SUCCEEDED, 2, Stage.PAID)
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 1 and bonuses_at_prolific(prolific_fake) == [[150], [150]]
    [pay_call] = ProlificCall.objects.filter(path__endswith="/pay/")
    assert pay_call.status == 0 and "Timeout" in pay_call.error  # recorded as the answer that never came
    assert batch.pay_accepted_at is None  # we never heard Prolific accept: its record said it


def test_a_lost_answer_after_the_payment_is_reconciled(prolific_fake, batch, django_capture_on_commit_callbacks):
    prolific_fake.fail("POST", PAY, 502, after_handling=True)  # accepted, then the answer is a 502

    job = pay(batch, django_capture_on_commit_callbacks)

    assert (job.status, batch.stage) == (BonusPayJob.Status.SUCCEEDED, Stage.PAID)
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 1 and len(prolific_fake.calls_to("POST", PAY)) == 1


def test_a_pay_call_whose_fate_is_unknown_is_never_sent_again_by_paying(
    prolific_fake,
    batch,
    django_capture_on_commit_callbacks,
):
    prolific_fake.fail("POST", PAY, 502)  # not carried out, but we cannot know that from a 502

    job = pay(batch, django_capture_on_commit_callbacks)

    assert job.status == BonusPayJob.Status.FAILED and job.attempts == BonusPayJob.MAX_ATTEMPTS
    assert "It is not sent again" in job.error and "recover the batch" in job.error and batch.stage == Stage.PAYING
    assert len(prolific_fake.calls_to("POST", PAY)) == 1 and pays_of(prolific_fake, batch.prolific_bulk_id) == 0
    job = pay(batch, django_capture_on_commit_callbacks)  # paying again only reconciles
    assert job.status == BonusPayJob.Status.FAILED and len(prolific_fake.calls_to("POST", PAY)) == 1


def test_a_paying_batch_is_recovered_and_paid_when_prolific_shows_none_of_it(
    prolific_fake,
    batch,
    settings,
    django_capture_on_commit_callbacks,
):
    """Main had no way out of PAYING for a call that never reached Prolific: it blocked the study's
    later batches for good. A recovery re-sends only once Prolific's record shows none of it."""
    prolific_fake.fail("POST", PAY, 502)  # the call never carried out
    pay(batch, django_capture_on_commit_callbacks)
    assert batch.stage == Stage.PAYING

    with pytest.raises(BonusRefused, match="Prolific pays in the following minutes: recover it from"):
        bonus_batch_recover(batch=batch)  # too early to tell
    settings.PROLIFIC_BONUS_RESEND_AFTER_SECONDS = 0
    with django_capture_on_commit_callbacks(execute=True):
        job = bonus_batch_recover(batch=batch)

    job.refresh_from_db()
    batch.refresh_from_db()
    assert (job.status, job.resend_if_unpaid, batch.stage) == (BonusPayJob.Status.SUCCEEDED, True, Stage.PAID)
    # Two calls, one payment: the first call was never carried out (its answer a 502 before it).
    assert len(prolific_fake.calls_to("POST", PAY)) == 2 and pays_of(prolific_fake, batch.prolific_bulk_id) == 1
    assert bonuses_at_prolific(prolific_fake) == [[150.0], [150.0]]


def test_a_recovery_finding_the_batch_paid_sends_nothing(
    prolific_fake,
    batch,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.PROLIFIC_BONUS_RESEND_AFTER_SECONDS = 0
    prolific_fake.fail("POST", PAY, 502, after_handling=True)  # carried out; the answer lost
    prolific_fake.fail("GET", r"studies/[^/]+/submissions/", 503, times=50)  # and the record unreadable for a while
    pay(batch, django_capture_on_commit_callbacks)
    assert batch.stage == Stage.PAYING
    prolific_fake.faults.clear()

    with django_capture_on_commit_callbacks(execute=True):
        job = bonus_batch_recover(batch=batch)

    batch.refresh_from_db()
    assert batch.stage == Stage.PAID and len(prolific_fake.calls_to("POST", PAY)) == 1
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 1 and job.resend_if_unpaid


def test_a_recovery_finding_part_of_the_batch_paid_sends_nothing(
    prolific_fake,
    batch,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.PROLIFIC_BONUS_RESEND_AFTER_SECONDS = 0
    prolific_fake.fail("POST", PAY, 502)
    pay(batch, django_capture_on_commit_callbacks)
    first = next(iter(prolific_fake.state["submissions"].values()))
    first["bonus_payments"].append(150.0)  # one of the two shows paid (by hand, or partly)

    with django_capture_on_commit_callbacks(execute=True):
        job = bonus_batch_recover(batch=batch)

    job.refresh_from_db()
    batch.refresh_from_db()
    assert job.status == BonusPayJob.Status.FAILED and "shows the bonus of 1 of 2 participants" in job.error
    assert batch.stage == Stage.PAYING and len(prolific_fake.calls_to("POST", PAY)) == 1


def test_recovering_a_payment_prolific_accepted_needs_its_failure_report(
    prolific_fake,
    batch,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.PROLIFIC_BONUS_RESEND_AFTER_SECONDS = 0
    payment_fail(prolific_fake, batch.prolific_bulk_id)
    pay(batch, django_capture_on_commit_callbacks)
    assert batch.stage == Stage.PAYING and batch.pay_accepted_at is not None

    with pytest.raises(BonusRefused, match="not to pay a second time unless it reports that the payment failed"):
        bonus_batch_recover(batch=batch)
    with django_capture_on_commit_callbacks(execute=True):
        bonus_batch_recover(batch=batch, prolific_reported_failure=True)

    batch.refresh_from_db()
    assert batch.stage == Stage.PAID and len(prolific_fake.calls_to("POST", PAY)) == 2
    assert bonuses_at_prolific(prolific_fake) == [[150.0], [150.0]]  # the failed one never arrived


def test_a_call_that_never_reached_prolific_leaves_the_batch_to_pay_again(
    prolific_fake,
    batch,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.PROLIFIC_API_URL = "http://127.0.0.1:9/api/v1/"  # nothing listens: no connection is made

    job = pay(batch, django_capture_on_commit_callbacks)

    assert job.status == BonusPayJob.Status.FAILED and "could not be reached, nothing was paid" in job.error
    assert (batch.stage, batch.pay_sent_at) == (Stage.CREATED, None)


def test_a_refusal_pays_nothing_and_leaves_the_batch_to_pay_again(
    prolific_fake,
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


def test_a_second_worker_on_a_batch_whose_call_went_out_only_reconciles(prolific_fake, batch):
    # As if another worker had taken the call (CREATED -> PAYING) and then died before any answer.
    BonusBatch.objects.filter(pk=batch.pk).update(stage=Stage.PAYING)
    job = BonusPayJob.objects.create(batch=batch, status=BonusPayJob.Status.RUNNING, attempts=1)
    with pytest.raises(prolific_bonuses.JobRetry, match="does not show the bonus of 2 of 2"):
        prolific_bonuses._pay(job, lambda *args: None)
    assert prolific_fake.calls_to("POST", PAY) == []


def test_a_pay_call_waits_while_another_batch_of_the_study_is_paying(
    prolific_fake,
    batch,
    django_capture_on_commit_callbacks,
):
    other = create(batch.study, [line.participant for line in batch.lines.all()], reason="again")
    prolific_fake.fail("POST", PAY, 502)  # the first batch's pay call: its fate unknown, PAYING
    pay(batch, django_capture_on_commit_callbacks)
    assert batch.stage == Stage.PAYING and len(prolific_fake.calls_to("POST", PAY)) == 1

    job = pay(other, django_capture_on_commit_callbacks)

    assert job.status == BonusPayJob.Status.FAILED and other.stage == Stage.CREATED
    assert f"bonus batch #{batch.pk} of the same Prolific study is being paid" in job.error
    assert len(prolific_fake.calls_to("POST", PAY)) == 1 and pays_of(prolific_fake, other.prolific_bulk_id) == 0


def test_reconciling_never_takes_another_paying_batchs_bonus_for_its_own(prolific_fake, batch):
    # Both batches' pay calls went out and their answers were lost; only the first one was paid.
    other = create(batch.study, [line.participant for line in batch.lines.all()], reason="again")
    for submission in prolific_fake.state["submissions"].values():
        submission["bonus_payments"].append(150.0)  # the first batch's bonus, as Prolific shows it
    BonusBatch.objects.filter(pk__in=[batch.pk, other.pk]).update(stage=Stage.PAYING)
    job = BonusPayJob.objects.create(batch=other, status=BonusPayJob.Status.RUNNING, attempts=1)

    with pytest.raises(prolific_bonuses.JobRetry, match="does not show the bonus of 2 of 2"):
        prolific_bonuses._pay(job, lambda *args: None)

    other.refresh_from_db()
    assert other.stage == Stage.PAYING and prolific_fake.calls_to("POST", PAY) == []


# --- one payment per intent ---------------------------------------------------------------------------


def test_a_second_batch_for_the_same_people_and_reason_is_refused_naming_the_first(prolific_fake, batch):
    people = [line.participant for line in batch.lines.all()]
    with pytest.raises(BonusAlreadyGiven, match=f"bonus batch #{batch.pk}") as refused:
        create(batch.study, people, reason="  Quality   BONUS ")  # case and spaces make no other reason
    assert refused.value.batches == [batch.pk]
    assert "2 of these participants already have a bonus for" in str(refused.value)
    assert BonusBatch.objects.count() == 1 and len(prolific_fake.calls_to("POST", SETUP)) == 1  # nothing sent


def test_a_newcomer_of_the_study_gets_the_bonus_the_others_had(prolific_fake, batch):
    newcomer = ParticipantFactory(study=batch.study, prolific_study_id=batch.prolific_study_id)
    took_part(prolific_fake, newcomer, status="APPROVED")
    later = create(batch.study, [newcomer])
    assert [line.participant for line in later.lines.all()] == [newcomer]


def test_repeat_pays_again_on_purpose_and_names_the_bonus_it_repeats(prolific_fake, batch):
    people = [line.participant for line in batch.lines.all()]
    again = create(batch.study, people, repeat=True)
    assert sorted(line.repeats.batch_id for line in again.lines.all()) == [batch.pk, batch.pk]
    third = create(batch.study, people, repeat=True)  # a third names the second
    assert {line.repeats.batch_id for line in third.lines.all()} == {again.pk}
    assert BonusLine.objects.filter(participant=people[0]).count() == 3


def test_two_identical_api_requests_make_one_batch_and_pay_once(
    client,
    prolific_fake,
    django_capture_on_commit_callbacks,
):
    small = SmallStudy()
    for person in (small.ana, small.ben, small.cleo, small.dan, small.eve, small.fay):
        person.refresh_from_db()
        took_part(prolific_fake, person, status="APPROVED")
    user = User.objects.create_user("researcher", is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_bonusbatch", "add_bonusbatch", "pay_bonusbatch"])
    )
    client.force_login(user)
    body = {"study": small.study.pk, "amount_cents": 200, "min_kappa": 0.5}

    first = client.post("/api/v1/bonus-batches/", body, content_type="application/json")
    second = client.post("/api/v1/bonus-batches/", body, content_type="application/json")

    assert first.status_code == 201 and first.json()["amount_cents"] == 600
    assert second.status_code == 409 and second.json()["earlier_batches"] == [first.json()["id"]]
    assert f"bonus batch #{first.json()['id']}" in second.json()["detail"]
    # A retry with an Idempotency-Key gets the first answer again, not a refusal nor a second batch.
    keyed = {"HTTP_IDEMPOTENCY_KEY": "quality-2026-05"}
    body["reason"] = "quality bonus, round 2"
    third = client.post("/api/v1/bonus-batches/", body, content_type="application/json", **keyed)
    fourth = client.post("/api/v1/bonus-batches/", body, content_type="application/json", **keyed)
    assert third.status_code == fourth.status_code == 201 and third.json() == fourth.json()
    assert fourth["Idempotent-Replayed"] == "true" and BonusBatch.objects.count() == 2
    for created in (first.json(), third.json()):
        with django_capture_on_commit_callbacks(execute=True):
            client.post(f"/api/v1/bonus-batches/{created['id']}/pay/")
            client.post(f"/api/v1/bonus-batches/{created['id']}/pay/")  # a double click
    assert len(prolific_fake.calls_to("POST", PAY)) == 2  # one per batch
    paid = [s["bonus_payments"] for s in prolific_fake.state["submissions"].values() if s["bonus_payments"]]
    assert sorted(paid) == [[200.0, 200.0]] * 3  # ana, ben, cleo: once per reason


def test_the_api_recovers_only_a_batch_left_paying(client, prolific_fake, batch, settings):
    client.force_login(User.objects.create_superuser("boss"))
    url = f"/api/v1/bonus-batches/{batch.pk}/recover/"
    refused = client.post(url, {}, content_type="application/json")
    assert (
        refused.status_code == 409 and "only a batch whose pay call went out is recovered" in refused.json()["detail"]
    )
    settings.PROLIFIC_BONUS_RESEND_AFTER_SECONDS = 0
    BonusBatch.objects.filter(pk=batch.pk).update(stage=Stage.PAYING, pay_sent_at="2026-01-01T00:00Z")
    queued = client.post(url, {}, content_type="application/json")
    assert queued.status_code == 202 and queued.json()["resend_if_unpaid"] is True


def test_a_double_admin_submit_makes_one_batch(client, prolific_fake):
    small = SmallStudy()
    for person in (small.ana, small.ben, small.cleo, small.dan, small.eve, small.fay):
        person.refresh_from_db()
        took_part(prolific_fake, person, status="APPROVED")
    client.force_login(User.objects.create_superuser("boss"))
    form = {"study": small.study.pk, "amount": "2.00", "min_kappa": "0.5", "reason": ""}

    first = client.post(reverse("admin:prolific_bonusbatch_add"), form)
    second = client.post(reverse("admin:prolific_bonusbatch_add"), form)

    [batch] = BonusBatch.objects.all()
    assert first.status_code == 302 and second.status_code == 200
    assert f"already have a bonus for &#x27;quality bonus&#x27; in this study: bonus batch #{batch.pk}" in (
        second.content.decode()
    )
    again = client.post(reverse("admin:prolific_bonusbatch_add"), {**form, "repeat": "on"})
    assert again.status_code == 302 and BonusBatch.objects.count() == 2


# --- the bonus and its refusals -----------------------------------------------------------------------


def test_the_quality_bonus_goes_to_who_agrees_with_the_others(prolific_fake):
    small = SmallStudy()
    everyone = [small.ana, small.ben, small.cleo, small.dan, small.eve, small.fay]
    for person in everyone:
        person.refresh_from_db()
        took_part(prolific_fake, person, status="APPROVED")
    lines = quality_bonus_lines(study=small.study, amount_cents=200, min_kappa=0.5)
    assert sorted(p.pk for p, _ in lines) == sorted(p.pk for p in (small.ana, small.ben, small.cleo))
    batch = bonus_batch_create(study=small.study, lines=lines, reason="quality", client=ProlificClient.from_settings())
    assert (batch.amount_cents, batch.total_cents) == (600, Decimal("800.00"))


def test_bad_batches_are_refused_naming_the_problem(prolific_fake):
    study = StudyFactory()
    anonymous = ParticipantFactory(study=study, prolific_pid="")
    client = ProlificClient.from_settings()
    with pytest.raises(BonusRefused, match="no participant qualifies"):
        bonus_batch_create(study=study, lines=[], reason="r", client=client)
    with pytest.raises(BonusRefused, match="came without a Prolific id"):
        bonus_batch_create(study=study, lines=[(anonymous, 100)], reason="r", client=client)
    person = ParticipantFactory(study=study)
    with pytest.raises(BonusRefused, match="whole number of cents above 0"):
        bonus_batch_create(study=study, lines=[(person, Decimal("1.50"))], reason="r", client=client)
    with pytest.raises(BonusRefused, match="a bonus needs a reason"):
        bonus_batch_create(study=study, lines=[(person, 100)], reason="  ", client=client)
    with pytest.raises(Exception, match="has not taken part in the study"):  # not a participant at Prolific
        bonus_batch_create(study=study, lines=[(person, 100)], reason="r", client=client)
    assert not BonusBatch.objects.exists()


def test_the_cost_so_far_counts_the_bonuses_prolific_shows_paid(
    prolific_fake,
    batch,
    django_capture_on_commit_callbacks,
):
    assert bonuses_paid_cents(study=batch.study) == 0  # set up, not paid
    pay(batch, django_capture_on_commit_callbacks)
    assert bonuses_paid_cents(study=batch.study) == 300
