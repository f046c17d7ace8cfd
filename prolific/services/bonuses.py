"""Bonus batches through Prolific, paid once per intent (issues 22 and 30; the stages:
prolific.models.bonuses). Money is in cents throughout; the CSV Prolific reads is the one place it
becomes the study's currency ("1.50 for £1.50", its documentation says), and Prolific answers in
cents again.

Created: the batch is set up at Prolific (`submissions/bonus-payments/`, which pays nothing) and
stored with Prolific's total. A participant is paid once per reason in a study: a batch that would
pay someone a bonus for a reason they already have one for (in any batch of the study, paid or not)
is refused with the earlier batch named, unless `repeat` says it is meant (each such line then names
the bonus it repeats). Two identical set-ups at once (a double submit) may both reach Prolific, where
a set-up pays nothing; only one is stored, the other meets the unique constraint on the lines and is
refused as the second one.

Paid: a BonusPayJob on the job runner. Why a second payment cannot happen, whatever fails:

- a double click or a second POST: one unfinished job per batch (a unique constraint), and a batch
  row locked while its job is queued; a second request gets the job already queued;
- two workers on one job (a redelivered message, a sweep that took a slow worker for dead): the
  runner's claim lets one run, and the pay call itself is guarded by CREATED -> PAYING, a conditional
  update committed before the call that only one attempt can win;
- Prolific accepts the pay call (202) and pays in the following minutes: the batch stays PAYING
  until Prolific's record of the study's submissions (`bonus_payments`, in cents) shows every bonus of
  it, read again after each of PROLIFIC_BONUS_RECONCILE_SECONDS; a payment that never shows fails
  the job with what was seen, and is not sent again;
- a worker killed, or an answer that timed out, after the call went out: the batch is PAYING and
  the next attempt only reconciles. Only a refusal (a 4xx answer: Prolific processed the request and
  paid nothing) or a connection never made returns the batch to CREATED;
- a batch left PAYING whose payment never shows: a recovery (bonus_batch_recover) reconciles once
  more and sends the pay call again only if Prolific's record shows none of the batch, and no sooner
  than PROLIFIC_BONUS_RESEND_AFTER_SECONDS after the first call; for a call Prolific accepted, only
  once the researcher says Prolific reported the payment failed (its documentation: "Do not attempt
  to pay the bonus payment a second time unless you receive a message to say the payments have
  failed");
- two batches of one Prolific study: Prolific shows a participant's bonuses of a study summed, so
  reconciling cannot tell whose pay call went through. A batch's pay call waits while another batch
  of its study is PAYING, and reconciling expects the lines of every batch of the study that is PAID
  or PAYING: a batch is never marked paid on the strength of another's bonus. Prolific showing more
  than those batches paid (a payment made twice, or by hand) is flagged on the batch
  (`overpaid_cents`).
"""

from collections import defaultdict
from datetime import timedelta
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Participant, Study
from annotation.refusals import Refused
from annotation.selectors.review import participant_review_rows
from annotation.shared.jobs import JobFailed, JobRetry, job_enqueue, job_run
from prolific.client import ProlificClient, ProlificError
from prolific.models.bonuses import BonusBatch, BonusLine, BonusPayJob, reason_key
from prolific.services.costs import money

Stage = BonusBatch.Stage
UNFINISHED = [BonusPayJob.Status.QUEUED, BonusPayJob.Status.RUNNING]
QUALITY_BONUS = "quality bonus"


class BonusRefused(Refused):
    """Why a batch cannot be created or paid; shown to the researcher."""


class BonusAlreadyGiven(BonusRefused):
    """The batch would pay participants a bonus of a reason they already have one for."""

    def __init__(self, message: str, *, batches: list[int]):
        super().__init__(message)
        self.batches = batches


def quality_bonus_lines(*, study: Study, amount_cents: int, min_kappa: float) -> list[tuple[Participant, int]]:
    """The review page's quality bonus: every participant not rejected whose leave-one-out kappa
    (annotation.selectors.review) is at least `min_kappa`, `amount_cents` each."""
    rows = [
        row
        for row in participant_review_rows(study=study)
        if row.kappa is not None and row.kappa >= min_kappa and row.decision != Participant.Decision.REJECTED
    ]
    people = Participant.objects.in_bulk([row.participant_id for row in rows])
    return [(people[row.participant_id], amount_cents) for row in rows]


def bonus_batch_create(
    *,
    study: Study,
    lines: list[tuple[Participant, int]],
    reason: str,
    client: ProlificClient,
    user=None,
    repeat: bool = False,
) -> BonusBatch:
    """Set the bonuses (in cents) up at Prolific and store the batch with Prolific's total; nothing
    is paid. BonusAlreadyGiven when a participant already has a bonus of this reason here (unless
    `repeat`), BonusRefused for any other reason it cannot be set up."""
    prolific_study_id = _checked(lines)
    key = reason_key(reason)
    if not key:
        raise BonusRefused("a bonus needs a reason: the participants see why they are paid, and it is paid once")
    earlier = _earlier_bonuses([person for person, _ in lines], key)
    if earlier and not repeat:
        raise _already_given(earlier, reason)
    csv = "\n".join(f"{person.prolific_pid},{_currency(cents)}" for person, cents in lines)
    answer = client.bonus_payments_create(study_id=prolific_study_id, csv_bonuses=csv)
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction stays usable after a refusal
            batch = BonusBatch.objects.create(
                study=study,
                reason=reason[:200],
                prolific_study_id=prolific_study_id,
                prolific_bulk_id=_bulk_id(answer),
                amount_cents=sum(cents for _, cents in lines),
                fees_cents=_cents(answer, "fees"),
                vat_cents=_cents(answer, "vat"),
                total_cents=_cents(answer, "total_amount"),
                created_by=user,
            )
            BonusLine.objects.bulk_create(
                BonusLine(
                    batch=batch,
                    participant=person,
                    prolific_pid=person.prolific_pid,
                    amount_cents=cents,
                    reason_key=key,
                    repeats=earlier.get(person.pk) if repeat else None,
                )
                for person, cents in lines
            )
    except IntegrityError:
        # Another request stored a batch for these people and this reason (or repeated the same
        # bonuses) since the check above: its batch is the one named.
        raise _already_given(_earlier_bonuses([person for person, _ in lines], key), reason, meanwhile=True) from None
    return batch


def _checked(lines: list[tuple[Participant, int]]) -> str:
    """The one Prolific study of these lines; BonusRefused naming what is wrong."""
    if not lines:
        raise BonusRefused("no participant qualifies for this bonus")
    for person, cents in lines:
        if not person.prolific_pid or not person.prolific_study_id:
            raise BonusRefused(f"{person} came without a Prolific id: Prolific cannot pay them a bonus")
        if isinstance(cents, bool) or not isinstance(cents, int) or cents <= 0:
            raise BonusRefused(f"the bonus of {person} is {cents!r} cents: it must be a whole number of cents above 0")
    studies = {person.prolific_study_id for person, _ in lines}
    if len(studies) > 1:
        raise BonusRefused(f"these participants took part in {len(studies)} Prolific studies: one batch per study")
    if len({person.pk for person, _ in lines}) != len(lines):
        raise BonusRefused("a participant is named twice in the batch")
    return studies.pop()


def _earlier_bonuses(people: list[Participant], key: str) -> dict[int, BonusLine]:
    """participant pk -> their latest bonus of this reason (the one a repeat would name), for those
    who have one."""
    found = (
        BonusLine.objects.filter(participant__in=people, reason_key=key, repeated_by__isnull=True)
        .select_related("batch")
        .order_by("pk")
    )
    return {line.participant_id: line for line in found}


def _already_given(earlier: dict[int, BonusLine], reason: str, *, meanwhile: bool = False) -> BonusAlreadyGiven:
    by_batch: dict[int, int] = defaultdict(int)
    for line in earlier.values():
        by_batch[line.batch_id] += 1
    named = "; ".join(
        f"bonus batch #{pk} ({count} of them, {BonusBatch.objects.get(pk=pk).get_stage_display().lower()})"
        for pk, count in sorted(by_batch.items())
    )
    when = " (set up a moment ago, by another request)" if meanwhile else ""
    return BonusAlreadyGiven(
        f"{len(earlier)} of these participants already have a bonus for {reason!r} in this study: {named}{when}. "
        "Nothing was set up. To pay them again on purpose, ask for a repeat.",
        batches=sorted(by_batch),
    )


def _currency(cents: int) -> str:
    """Cents as the decimal the CSV takes ("1.50 for £1.50")."""
    return f"{cents // 100}.{cents % 100:02d}"


def _bulk_id(answer: dict) -> str:
    bulk_id = answer.get("id")
    if not isinstance(bulk_id, str) or not bulk_id:
        raise BonusRefused(f"Prolific's answer to the set-up has no bulk payment id: {str(answer)[:200]}")
    return bulk_id


def _cents(answer: dict, field: str) -> Decimal:
    """One of Prolific's money fields, in cents as it answered them (a double, or null)."""
    value = answer.get(field)
    try:
        return Decimal(str(value or 0)).quantize(Decimal("0.01"))
    except InvalidOperation:
        raise BonusRefused(f"Prolific answered {field}={value!r}, not an amount in cents") from None


# --- paying ---------------------------------------------------------------------------------------


def bonus_batch_pay(*, batch: BonusBatch, user=None) -> BonusPayJob:
    """Queue the batch's payment (or, for a batch whose pay call went out, its reconciling), or
    return the job already queued for it (a double click)."""
    return _queue(batch, user=user, resend_if_unpaid=False)


def bonus_batch_recover(*, batch: BonusBatch, user=None, prolific_reported_failure: bool = False) -> BonusPayJob:
    """Recover a batch left PAYING: reconcile, and send the pay call again only if Prolific's record
    shows none of the batch. BonusRefused while it is too early to tell, and, for a call Prolific
    accepted, until the researcher says Prolific reported the payment failed."""
    batch = BonusBatch.objects.get(pk=batch.pk)
    if batch.stage != Stage.PAYING or batch.pay_sent_at is None:
        raise BonusRefused(f"{batch} is not being paid: only a batch whose pay call went out is recovered")
    resend_from = batch.pay_sent_at + timedelta(seconds=settings.PROLIFIC_BONUS_RESEND_AFTER_SECONDS)
    if timezone.now() < resend_from:
        raise BonusRefused(
            f"the pay call went out at {batch.pay_sent_at:%Y-%m-%d %H:%M} UTC and Prolific pays in the following "
            f"minutes: recover it from {resend_from:%Y-%m-%d %H:%M} UTC if its bonuses do not show by then "
            "(paying reconciles now)"
        )
    if batch.pay_accepted_at and not prolific_reported_failure:
        raise BonusRefused(
            f"Prolific accepted this payment at {batch.pay_accepted_at:%Y-%m-%d %H:%M} UTC. Its documentation asks "
            "not to pay a second time unless it reports that the payment failed: recover once it has (and say so)"
        )
    return _queue(batch, user=user, resend_if_unpaid=True)


def _queue(batch: BonusBatch, *, user, resend_if_unpaid: bool) -> BonusPayJob:
    with transaction.atomic():
        batch = BonusBatch.objects.select_for_update().get(pk=batch.pk)
        if batch.stage == Stage.PAID:
            raise BonusRefused(f"{batch} is paid already")
        unfinished = batch.pay_jobs.filter(status__in=UNFINISHED).first()
        if unfinished is not None:
            return unfinished
        try:
            with transaction.atomic():
                job = BonusPayJob.objects.create(
                    batch=batch, created_by=user, total=1, resend_if_unpaid=resend_if_unpaid
                )
        except IntegrityError:  # queued meanwhile by a request that did not lock (never, but cheap)
            return batch.pay_jobs.get(status__in=UNFINISHED)
        job_enqueue(job)
    return job


def bonus_batch_pay_run(*, job_id: int) -> None:
    job_run(model=BonusPayJob, job_id=job_id, work=_pay)


def _pay(job: BonusPayJob, progress) -> dict:
    batch = BonusBatch.objects.select_related("study").get(pk=job.batch_id)
    client = ProlificClient.from_settings(study=batch.study)  # its calls in the study's call log
    if client is None:
        raise JobFailed("PROLIFIC_API_TOKEN is not set: nothing was sent")
    if batch.stage == Stage.PAID:
        return {}
    if batch.stage == Stage.CREATED and _take_pay_call(batch, job):
        return _send_pay_call(batch, client, job, progress)
    return _reconcile(BonusBatch.objects.get(pk=batch.pk), client, job, progress)


def _take_pay_call(batch: BonusBatch, job: BonusPayJob) -> bool:
    """Whether this attempt won the pay call (CREATED -> PAYING). Waits (JobRetry, JobFailed at
    the last attempt) while another batch of the same Prolific study is PAYING."""
    # The conditional update is the guard: committed before the call (the worker is in autocommit),
    # so whoever comes next (another attempt, another worker) finds PAYING and only reconciles.
    # The study's batches are locked first, so two batches of one study cannot both win at once.
    with transaction.atomic():
        same_study = BonusBatch.objects.select_for_update().filter(prolific_study_id=batch.prolific_study_id)
        stages = dict(same_study.order_by("pk").values_list("pk", "stage"))
        paying = [pk for pk, stage in stages.items() if stage == Stage.PAYING and pk != batch.pk]
        if paying and stages.get(batch.pk) == Stage.CREATED:
            _wait_for(job, paying[0])
        return bool(
            BonusBatch.objects.filter(pk=batch.pk, stage=Stage.CREATED).update(
                stage=Stage.PAYING, pay_sent_at=timezone.now(), pay_accepted_at=None
            )
        )


def _wait_for(job: BonusPayJob, other_pk: int) -> None:
    why = (
        f"bonus batch #{other_pk} of the same Prolific study is being paid and not confirmed yet; nothing was"
        " sent for this batch (Prolific shows a participant's bonuses of a study summed: two pay calls at once"
        " could not be told apart)"
    )
    if job.attempts >= BonusPayJob.MAX_ATTEMPTS:
        raise JobFailed(
            f"{why}. Pay this batch again once batch #{other_pk} is paid (paying #{other_pk} again reconciles it)."
        )
    raise JobRetry(why, delay=_reconcile_delay(job))


def _send_pay_call(batch: BonusBatch, client: ProlificClient, job: BonusPayJob, progress) -> dict:
    progress("paying at Prolific", 0, 1)
    try:
        client.bonus_payments_pay(bulk_id=batch.prolific_bulk_id)
    except ProlificError as error:
        if _refused(error) or not error.reached:
            # Prolific answered and paid nothing, or the call never reached it: it may be paid again.
            BonusBatch.objects.filter(pk=batch.pk, stage=Stage.PAYING).update(stage=Stage.CREATED, pay_sent_at=None)
            what = "refused the payment" if error.reached else "could not be reached"
            raise JobFailed(f"Prolific {what}, nothing was paid: {error}") from None
        # No answer, or a server error: it may have paid. Never sent again; reconciled next.
        raise JobRetry(f"the pay call's answer was lost ({error}); reconciling", delay=_reconcile_delay(job)) from None
    # Accepted: Prolific pays "in the following minutes". Paid once its record shows it.
    BonusBatch.objects.filter(pk=batch.pk, stage=Stage.PAYING).update(pay_accepted_at=timezone.now())
    return _reconcile(BonusBatch.objects.get(pk=batch.pk), client, job, progress)


def _refused(error: ProlificError) -> bool:
    return 400 <= error.status < 500 and error.status not in (408, 429)


# --- reconciling ----------------------------------------------------------------------------------


def _reconcile(batch: BonusBatch, client: ProlificClient, job: BonusPayJob, progress) -> dict:
    if batch.stage != Stage.PAYING:
        return {}
    progress("reconciling with Prolific", 0, 1)
    try:
        shown = _bonuses_shown(client, batch.prolific_study_id)
    except ProlificError as error:
        return _reconcile_later(batch, job, f"could not read the bonuses at Prolific ({error})")
    expected = _expected_bonuses(batch, with_this_batch=True)
    mine = list(batch.lines.values_list("prolific_pid", flat=True))
    short = [pid for pid in mine if shown.get(pid, 0) < expected[pid]]
    if not short:
        _mark_paid(batch, shown, expected, mine)
        return {}
    if job.resend_if_unpaid:
        return _resend_if_none_shown(batch, client, job, progress, shown=shown, mine=mine)
    return _reconcile_later(
        batch, job, f"Prolific's record does not show the bonus of {len(short)} of {len(mine)} participants yet"
    )


def _reconcile_later(batch: BonusBatch, job: BonusPayJob, why: str) -> dict:
    if job.attempts < BonusPayJob.MAX_ATTEMPTS:
        raise JobRetry(why, delay=_reconcile_delay(job))
    sent = f"{batch.pay_sent_at:%Y-%m-%d %H:%M} UTC" if batch.pay_sent_at else "earlier"
    if batch.pay_accepted_at:
        raise JobFailed(
            f"Prolific accepted the payment at {batch.pay_accepted_at:%Y-%m-%d %H:%M} UTC, and {why}: the payment "
            "may have failed at Prolific (its balance?). Nothing is sent again. Pay again to reconcile once more; "
            "once Prolific reports that the payment failed, recover the batch."
        )
    raise JobFailed(
        f"the pay call went out at {sent} without an answer we could read, and {why}. It is not sent again: pay "
        "again to reconcile once more, or recover the batch, which sends it again only if Prolific's record shows "
        "none of it."
    )


def _resend_if_none_shown(batch: BonusBatch, client, job: BonusPayJob, progress, *, shown: dict, mine: list) -> dict:
    """A recovery: back to CREATED and paid again, if Prolific shows none of this batch."""
    before = _expected_bonuses(batch, with_this_batch=False)
    shown_here = [pid for pid in mine if shown.get(pid, 0) > before.get(pid, 0)]
    if shown_here:
        raise JobFailed(
            f"Prolific's record shows the bonus of {len(shown_here)} of {len(mine)} participants of this batch: it "
            "was paid at least in part, so it is not sent again. Pay again to reconcile once more, and settle the "
            "rest in Prolific's web app."
        )
    note = f"recovered {timezone.now():%Y-%m-%d %H:%M} UTC: Prolific showed none of the pay call of {batch.pay_sent_at:%Y-%m-%d %H:%M} UTC; sent again"
    recovered = BonusBatch.objects.filter(pk=batch.pk, stage=Stage.PAYING).update(
        stage=Stage.CREATED, pay_sent_at=None, pay_accepted_at=None, paid_how=note[:300]
    )
    if recovered and _take_pay_call(batch, job):
        return _send_pay_call(batch, client, job, progress)
    return {}


def _reconcile_delay(job: BonusPayJob) -> float:
    delays = settings.PROLIFIC_BONUS_RECONCILE_SECONDS
    return float(delays[min(job.attempts, len(delays)) - 1])


def _bonuses_shown(client: ProlificClient, prolific_study_id: str) -> dict[str, Decimal]:
    """participant id -> the cents of bonus Prolific's record shows on their submissions of the
    study (`bonus_payments`: "Returned in pence / cents")."""
    shown: dict[str, Decimal] = defaultdict(Decimal)
    for submission in client.submissions_list(study_id=prolific_study_id):
        for cents in submission.get("bonus_payments") or []:
            shown[submission.get("participant_id", "")] += Decimal(str(cents))
    return shown


def _expected_bonuses(batch: BonusBatch, *, with_this_batch: bool) -> dict[str, int]:
    """participant id -> cents Prolific must show: the lines of this study's batches paid or being
    paid beside this one (Prolific shows them summed, so another batch's bonus must never count as
    this one's), and this batch's own when `with_this_batch`."""
    expected: dict[str, int] = defaultdict(int)
    others = BonusLine.objects.filter(
        batch__prolific_study_id=batch.prolific_study_id, batch__stage__in=[Stage.PAID, Stage.PAYING]
    ).exclude(batch=batch)
    lines = others | BonusLine.objects.filter(batch=batch) if with_this_batch else others
    for pid, cents in lines.values_list("prolific_pid", "amount_cents"):
        expected[pid] += cents
    return expected


def _mark_paid(batch: BonusBatch, shown: dict, expected: dict, mine: list) -> None:
    excess = {pid: shown[pid] - expected[pid] for pid in mine if shown.get(pid, 0) > expected[pid]}
    how = "Prolific's record shows every bonus of the batch"
    if excess:
        how += (
            f"; and {money(sum(excess.values()))} more than the study's batches paid, on {len(excess)} participant(s):"
            " paid twice, or by hand? Check the study's bonuses at Prolific"
        )
    BonusBatch.objects.filter(pk=batch.pk, stage=Stage.PAYING).update(
        stage=Stage.PAID, paid_at=timezone.now(), paid_how=how[:300], overpaid_cents=sum(excess.values(), Decimal(0))
    )
