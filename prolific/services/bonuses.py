"""Bonus batches through Prolific, paid exactly once (issue 22; the stages: prolific.models.bonuses).

Created: the batch is set up at Prolific (`submissions/bonus-payments/`, which pays nothing) and
stored with Prolific's total. Paid: a BonusPayJob on the job runner. Why a second payment cannot
happen, whatever fails:

- a double click or a second POST: one unfinished job per batch (a unique constraint), and a batch
  row locked while its job is queued; a second request gets the job already queued;
- two workers on one job (a redelivered message, a sweep that took a slow worker for dead): the
  runner's claim lets one run, and the pay call itself is guarded by CREATED -> PAYING, a conditional
  update committed before the call that only one attempt can win;
- a worker killed, or an answer that timed out, after the call went out: the batch is PAYING and is
  never sent again; the next attempt reconciles, reading the study's submissions at Prolific for
  the bonuses, and marks the batch paid once Prolific shows them. Only a refusal (a 4xx answer:
  Prolific processed the request and paid nothing) returns the batch to CREATED;
- two batches of one Prolific study: Prolific shows a participant's bonuses of the study summed, so
  reconciling cannot tell whose pay call went through. A batch's pay call waits while another
  batch of its study is PAYING, and reconciling expects the lines of every batch of the study that
  is PAID or PAYING: a batch is never marked paid on the strength of another's bonus.
"""

from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.jobs import JobFailed, JobRetry, job_enqueue, job_run
from annotation.models import Participant, Study
from annotation.selectors.review import participant_review_rows
from prolific.client import ProlificClient, ProlificError
from prolific.models.bonuses import BonusBatch, BonusLine, BonusPayJob

Stage = BonusBatch.Stage
CENT = Decimal("0.01")


class BonusRefused(Exception):
    """Why a batch cannot be created or paid; shown to the researcher."""


def quality_bonus_lines(*, study: Study, amount: Decimal, min_kappa: float) -> list[tuple[Participant, Decimal]]:
    """The review page's quality bonus: every participant not rejected whose leave-one-out kappa
    (annotation.selectors.review) is at least `min_kappa`, `amount` each."""
    rows = [
        row
        for row in participant_review_rows(study=study)
        if row.kappa is not None and row.kappa >= min_kappa and row.decision != Participant.Decision.REJECTED
    ]
    people = Participant.objects.in_bulk([row.participant_id for row in rows])
    return [(people[row.participant_id], amount) for row in rows]


def bonus_batch_create(
    *, study: Study, lines: list[tuple[Participant, Decimal]], reason: str, client: ProlificClient, user=None
) -> BonusBatch:
    """Set the bonuses up at Prolific and store the batch with Prolific's total (nothing is paid)."""
    prolific_study_id = _checked(lines)
    amounts = {person.pk: Decimal(amount).quantize(CENT, ROUND_HALF_UP) for person, amount in lines}
    csv = "\n".join(f"{person.prolific_pid},{amounts[person.pk]}" for person, _ in lines)
    answer = client.bonus_payments_create(study_id=prolific_study_id, csv_bonuses=csv)
    with transaction.atomic():
        batch = BonusBatch.objects.create(
            study=study,
            reason=reason[:200],
            prolific_study_id=prolific_study_id,
            prolific_bulk_id=answer["id"],
            amount=sum(amounts.values(), Decimal(0)),
            fees=_money(answer.get("fees", 0)),
            vat=_money(answer.get("vat", 0)),
            total_amount=_money(answer.get("total_amount", answer.get("amount", 0))),
            created_by=user,
        )
        BonusLine.objects.bulk_create(
            BonusLine(batch=batch, participant=person, prolific_pid=person.prolific_pid, amount=amounts[person.pk])
            for person, _ in lines
        )
    return batch


def _checked(lines: list[tuple[Participant, Decimal]]) -> str:
    """The one Prolific study of these lines; BonusRefused naming what is wrong."""
    if not lines:
        raise BonusRefused("no participant qualifies for this bonus")
    for person, amount in lines:
        if not person.prolific_pid or not person.prolific_study_id:
            raise BonusRefused(f"{person} came without a Prolific id: Prolific cannot pay them a bonus")
        if Decimal(amount) <= 0:
            raise BonusRefused(f"the bonus of {person} is {amount}: it must be more than 0")
    studies = {person.prolific_study_id for person, _ in lines}
    if len(studies) > 1:
        raise BonusRefused(f"these participants took part in {len(studies)} Prolific studies: one batch per study")
    if len({person.pk for person, _ in lines}) != len(lines):
        raise BonusRefused("a participant is named twice in the batch")
    return studies.pop()


def _money(value) -> Decimal:
    return Decimal(str(value)).quantize(CENT, ROUND_HALF_UP)


def bonus_batch_pay(*, batch: BonusBatch, user=None) -> BonusPayJob:
    """Queue the batch's payment, or return the job already queued for it (a double click)."""
    with transaction.atomic():
        batch = BonusBatch.objects.select_for_update().get(pk=batch.pk)
        if batch.stage == Stage.PAID:
            raise BonusRefused(f"{batch} is paid already")
        unfinished = batch.pay_jobs.filter(status__in=[BonusPayJob.Status.QUEUED, BonusPayJob.Status.RUNNING]).first()
        if unfinished is not None:
            return unfinished
        try:
            with transaction.atomic():
                job = BonusPayJob.objects.create(batch=batch, created_by=user, total=1)
        except IntegrityError:  # queued meanwhile by a request that did not lock (never, but cheap)
            return batch.pay_jobs.get(status__in=[BonusPayJob.Status.QUEUED, BonusPayJob.Status.RUNNING])
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
                stage=Stage.PAYING, pay_sent_at=timezone.now()
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
        answer = client.bonus_payments_pay(bulk_id=batch.prolific_bulk_id)
    except ProlificError as error:
        if _refused(error):
            # Prolific answered and paid nothing: the batch may be paid again later.
            BonusBatch.objects.filter(pk=batch.pk, stage=Stage.PAYING).update(stage=Stage.CREATED, pay_sent_at=None)
            raise JobFailed(f"Prolific refused the payment, nothing was paid: {error}") from None
        # No answer, or a server error: it may have paid. Never sent again; reconciled next.
        raise JobRetry(f"the pay call's answer was lost ({error}); reconciling", delay=_reconcile_delay(job)) from None
    _mark_paid(batch, f"Prolific accepted the payment: {str(answer)[:150]}")
    return {}


def _refused(error: ProlificError) -> bool:
    return 400 <= error.status < 500 and error.status not in (408, 429)


def _reconcile(batch: BonusBatch, client: ProlificClient, job: BonusPayJob, progress) -> dict:
    if batch.stage == Stage.PAID:
        return {}
    progress("reconciling with Prolific", 0, 1)
    try:
        shown = _bonuses_shown(client, batch.prolific_study_id)
    except ProlificError as error:
        return _reconcile_later(job, f"could not read the bonuses at Prolific ({error})")
    expected = _expected_bonuses(batch)
    short = [pid for pid, cents in expected.items() if shown.get(pid, 0) < cents]
    if short:
        return _reconcile_later(
            job, f"Prolific does not show the bonus of {len(short)} of {len(expected)} participants yet"
        )
    _mark_paid(batch, "reconciled: Prolific shows every bonus of the batch")
    return {}


def _reconcile_later(job: BonusPayJob, why: str) -> dict:
    if job.attempts >= BonusPayJob.MAX_ATTEMPTS:
        raise JobFailed(
            f"the pay call went out and {why}. It is not sent again: check the study's bonuses in Prolific's"
            " web app, then pay again to reconcile once more."
        )
    raise JobRetry(why, delay=_reconcile_delay(job))


def _reconcile_delay(job: BonusPayJob) -> float:
    delays = settings.PROLIFIC_BONUS_RECONCILE_SECONDS
    return float(delays[min(job.attempts, len(delays)) - 1])


def _bonuses_shown(client: ProlificClient, prolific_study_id: str) -> dict[str, int]:
    """participant id -> the cents of bonus Prolific shows on their submissions of the study."""
    shown: dict[str, int] = defaultdict(int)
    for submission in client.submissions_list(study_id=prolific_study_id):
        shown[submission.get("participant_id", "")] += sum(int(c) for c in submission.get("bonus_payments") or [])
    return shown


def _expected_bonuses(batch: BonusBatch) -> dict[str, int]:
    """participant id -> cents Prolific must show once this batch is paid: its line, and the lines
    of this study's batches paid before it or being paid beside it (Prolific shows them summed, so
    another batch's bonus must never count as this one's)."""
    expected: dict[str, int] = defaultdict(int)
    lines = BonusLine.objects.filter(batch__prolific_study_id=batch.prolific_study_id).filter(
        batch__stage__in=[Stage.PAID, Stage.PAYING]
    ) | BonusLine.objects.filter(batch=batch)
    for pid, amount in lines.values_list("prolific_pid", "amount"):
        expected[pid] += int(amount * 100)
    return expected


def _mark_paid(batch: BonusBatch, how: str) -> None:
    BonusBatch.objects.filter(pk=batch.pk, stage=Stage.PAYING).update(
        stage=Stage.PAID, paid_at=timezone.now(), paid_how=how[:200]
    )
