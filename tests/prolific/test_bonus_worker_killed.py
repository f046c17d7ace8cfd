"""A real worker killed between "created" and "paid" never pays twice (issue 22).

The worker is a real `celery worker` process (prefork, one child) on the test database and an
isolated Redis prefix, as tests/modelzoo/test_benchmark_worker_killed.py runs its GPU workers. The
contract fake of Prolific runs in this process; its pay call is carried out at once and then stalls,
and the worker is killed (SIGKILL, its whole process group) while it waits for the answer: Prolific
has paid, our side never heard. A second worker's start-up sweep finds the job silent and queues it
again; the batch is PAYING, so the job reconciles against the bonuses Prolific shows and marks it
paid, and the fake, which pays again on every pay call, was paid once. In the second test the worker
dies before Prolific carried the call out: it is not sent again either, and the job says so.

PostgreSQL only: the worker processes read the test database, and SQLite's lives in this process.
"""

import os
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from config.celery import app as celery_app
from prolific.client import ProlificClient
from prolific.models import BonusBatch, BonusPayJob
from prolific.services.bonuses import bonus_batch_create, bonus_batch_pay, bonus_batch_recover
from tests.annotation.factories import ParticipantFactory, StudyFactory
from tests.conftest import require_service
from tests.modelzoo.gpu_worker import BROKER_URL, Workers, app_on_isolated_broker, new_key_prefix, wait_for
from tests.prolific_fake.bonuses import pays_of
from tests.prolific_fake.submissions import submission_add

pytestmark = [pytest.mark.worker, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
PAY = r"bulk-bonus-payments/[^/]+/pay/"


@pytest.fixture
def workers(transactional_db, tmp_path, prolific_fake):
    if connection.vendor != "postgresql":
        pytest.skip("the worker processes read the test database: PostgreSQL only (DATABASE_URL=postgres://...)")
    require_service("Celery broker", BROKER_URL)
    prefix = new_key_prefix()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": _test_database_url(),
        "SECRET_KEY": "worker-test",
        "CELERY_BROKER_URL": BROKER_URL,
        "TEST_BROKER_KEY_PREFIX": prefix,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "DATA_DIR": str(tmp_path),
        "PROLIFIC_API_TOKEN": prolific_fake.token,
        "PROLIFIC_API_URL": prolific_fake.url,
        "PROLIFIC_TIMEOUT_SECONDS": "120",  # the answer is lost with the worker, not by a timeout
        "PROLIFIC_POLL_SECONDS": "0",
        "PROLIFIC_BONUS_RECONCILE_SECONDS": "1",
    }
    running = Workers(env, tmp_path, queue="celery")
    with app_on_isolated_broker(celery_app, prefix, redeliver_soon=True):
        try:
            yield running
        finally:
            running.stop_all()


def _test_database_url() -> str:
    db = connection.settings_dict
    credentials = quote(db["USER"] or "") + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
    return f"postgres://{credentials}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _batch(fake) -> BonusBatch:
    study = StudyFactory()
    people = [ParticipantFactory(study=study) for _ in range(3)]
    for person in people:
        submission_add(
            fake,
            study_id=person.prolific_study_id,
            participant_id=person.prolific_pid,
            submission_id=person.prolific_session_id,
            status="APPROVED",
        )
    client = ProlificClient.from_settings()
    return bonus_batch_create(study=study, lines=[(p, 200) for p in people], reason="quality", client=client)


def _kill_during_the_pay_call(workers, batch, *, reached) -> BonusPayJob:
    """Pay, kill the worker once `reached()` (its pay call is at the fake), and start another."""
    job = bonus_batch_pay(batch=batch)  # committed: sent to the broker
    first = workers.start("first")
    wait_for(reached, timeout=120, what="the pay call")
    workers.kill(first)
    batch.refresh_from_db()
    job.refresh_from_db()
    assert (batch.stage, job.status, job.attempts) == (BonusBatch.Stage.PAYING, BonusPayJob.Status.RUNNING, 1)
    # ... and silent ever since: as if STALE_AFTER had passed
    BonusPayJob.objects.filter(pk=job.pk).update(heartbeat_at=job.heartbeat_at - BonusPayJob.STALE_AFTER)
    workers.start("second")  # its start-up sweep queues the job again
    wait_for(lambda: _finished(job), timeout=120, what="the second worker to finish the job")
    return job


def test_a_worker_killed_after_prolific_accepted_the_pay_call_never_pays_twice(workers, prolific_fake):
    batch = _batch(prolific_fake)
    prolific_fake.state["pay_stall_seconds"] = 600  # paid at once; the answer would come in ten minutes

    job = _kill_during_the_pay_call(workers, batch, reached=lambda: pays_of(prolific_fake, batch.prolific_bulk_id) == 1)

    batch.refresh_from_db()
    assert job.status == BonusPayJob.Status.SUCCEEDED, (job.error, workers.log("second")[-3000:])
    assert job.attempts == 2 and batch.stage == BonusBatch.Stage.PAID
    assert batch.paid_how == "Prolific's record shows every bonus of the batch"
    assert pays_of(prolific_fake, batch.prolific_bulk_id) == 1
    assert len(prolific_fake.calls_to("POST", PAY)) == 1
    assert [s["bonus_payments"] for s in prolific_fake.state["submissions"].values()] == [[200]] * 3


def _finished(job: BonusPayJob) -> bool:
    job.refresh_from_db()
    return job.finished


def test_a_worker_killed_before_prolific_carried_the_call_out_never_sends_it_again(workers, prolific_fake, settings):
    """The worst case: the guard was taken and the call is on its way, not yet carried out, when the
    worker dies. Our side cannot tell this from the case above, so the call is not sent again: the
    job reconciles until it gives up and says so, and Prolific was asked to pay once, not twice. A
    recovery then finds none of it at Prolific and pays it, once."""
    batch = _batch(prolific_fake)
    prolific_fake.fail("POST", PAY, 502, delay=600)  # held ten minutes before anything is done

    job = _kill_during_the_pay_call(workers, batch, reached=lambda: len(prolific_fake.calls_to("POST", PAY)) == 1)

    batch.refresh_from_db()
    assert job.status == BonusPayJob.Status.FAILED and "It is not sent again" in job.error, job.error
    assert batch.stage == BonusBatch.Stage.PAYING and job.attempts == BonusPayJob.MAX_ATTEMPTS
    assert len(prolific_fake.calls_to("POST", PAY)) == 1 and pays_of(prolific_fake, batch.prolific_bulk_id) == 0

    settings.PROLIFIC_BONUS_RESEND_AFTER_SECONDS = 0
    recovery = bonus_batch_recover(batch=batch)
    wait_for(lambda: _finished(recovery), timeout=120, what="the recovery")
    batch.refresh_from_db()
    assert recovery.status == BonusPayJob.Status.SUCCEEDED and batch.stage == BonusBatch.Stage.PAID, recovery.error
    assert len(prolific_fake.calls_to("POST", PAY)) == 2 and pays_of(prolific_fake, batch.prolific_bulk_id) == 1
