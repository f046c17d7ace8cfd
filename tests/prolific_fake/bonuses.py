"""Bonuses as Prolific's API v1 documents them (rules.py: BONUS_SETUP, BONUS_AMOUNTS_IN_CENTS,
PAY_IS_ASYNCHRONOUS, PAY_NOT_IDEMPOTENT, PAY_TWICE_PAYS_TWICE): a bulk bonus payment set up from CSV
lines in the study's currency (pays nothing; answered in cents), then paid: the pay call is accepted
with 202 and the bonuses reach the submissions' `bonus_payments` (in cents) when the payment is
carried out, later. Every pay call pays again.

For tests: `state["pay_settle_seconds"]` (how long after the call a payment is carried out, 0 by
default), `state["pay_stall_seconds"]` (the call is accepted, then its answer waits that long: a
client that times out has been accepted all the same), `payment_fail(fake, bulk_id)` (the next
payment of that bulk id never arrives, as one that fails at Prolific after it was accepted),
`pays_of`."""

import copy
import time
from decimal import ROUND_HALF_UP, ROUND_UP, Decimal, InvalidOperation

from tests.prolific_fake import rules
from tests.prolific_fake.server import known_fields, not_found, route

CENT = Decimal("0.01")


@route("POST", r"submissions/bonus-payments/", page=f"{rules.BONUSES}/create-bonus-payments")
def bonus_setup(fake, request):
    body = request.body
    known_fields(body, {"study_id", "csv_bonuses"})
    study_id, csv = body.get("study_id"), body.get("csv_bonuses")
    if not isinstance(study_id, str) or not study_id or not isinstance(csv, str) or not csv.strip():
        raise rules.BONUS_SETUP.broken({"csv_bonuses": ["study_id and csv_bonuses are required."]})
    taken_part = {
        key: s
        for s in fake.state.get("submissions", {}).values()
        if s["study_id"] == study_id
        for key in (s["participant_id"], s["id"])
    }
    lines = [_line(number, text, taken_part) for number, text in enumerate(csv.strip().split("\n"), start=1)]
    amount = sum((cents for _, cents in lines), Decimal(0))
    fees = (amount * rules.BONUS_FEE_RATE).quantize(CENT, ROUND_UP)
    bulk = {"id": fake.new_id(), "study": study_id, "lines": lines, "pays": 0}
    fake.state.setdefault("bonus_batches", {})[bulk["id"]] = bulk
    # BONUS_AMOUNTS_IN_CENTS: doubles in minor units (850.0 for £8.50).
    return 201, {
        "id": bulk["id"],
        "study": study_id,
        "amount": float(amount),
        "fees": float(fees),
        "vat": 0.0,
        "total_amount": float(amount + fees),
    }


def _line(number: int, text: str, taken_part: dict) -> tuple[str, Decimal]:
    parts = text.strip().split(",")
    if len(parts) != 2:
        raise rules.BONUS_SETUP.broken({"csv_bonuses": [f"line {number}: expected <participant id>,<amount>"]})
    who, raw_amount = parts[0].strip(), parts[1].strip()
    try:
        amount = Decimal(raw_amount)  # in the study's currency: "1.50 for £1.50", "30 will pay £30.00"
    except InvalidOperation:
        raise rules.BONUS_SETUP.broken({"csv_bonuses": [f"line {number}: {raw_amount!r} is not an amount"]}) from None
    if not amount.is_finite() or amount <= 0:
        raise rules.BONUS_SETUP.broken({"csv_bonuses": [f"line {number}: the amount must be more than 0"]})
    if who not in taken_part:
        raise rules.BONUS_SETUP.broken({"csv_bonuses": [f"line {number}: {who} has not taken part in the study"]})
    return taken_part[who]["id"], (amount * 100).quantize(Decimal(1), ROUND_HALF_UP)


@route("POST", r"bulk-bonus-payments/(?P<id>[^/]+)/pay/", page=f"{rules.BONUSES}/pay-bonus-payments")
def bonus_pay(fake, request):
    known_fields(request.body, set())  # the page documents no body
    bulk = fake.state.get("bonus_batches", {}).get(request.params["id"])
    if bulk is None:
        raise not_found("bulk bonus payment")
    # PAY_TWICE_PAYS_TWICE: no memory of an earlier call; each one pays every line again, later.
    bulk["pays"] += 1
    due = time.monotonic() + fake.state.get("pay_settle_seconds", 0)
    failing = fake.state.setdefault("payments_failing", set())
    fails = bulk["id"] in failing
    failing.discard(bulk["id"])
    fake.state.setdefault("payments_due", []).append({"bulk": bulk["id"], "due": due, "fails": fails})
    stall = fake.state.get("pay_stall_seconds", 0)
    if stall:
        _answer_late(fake, stall)
    return 202, f"Bulk bonus payment with ID {bulk['id']} is being processed asynchronously."


def payments_settle(fake) -> None:
    """Carry out the payments that are due (PAY_IS_ASYNCHRONOUS): each line's cents reach its
    submission's bonus_payments. A failing payment is dropped, never carried out."""
    now = time.monotonic()
    due = fake.state.get("payments_due", [])
    for payment in [p for p in due if p["due"] <= now]:
        due.remove(payment)
        if payment["fails"]:
            continue
        for submission_id, cents in fake.state["bonus_batches"][payment["bulk"]]["lines"]:
            fake.state["submissions"][submission_id]["bonus_payments"].append(float(cents))


def payment_fail(fake, bulk_id: str) -> None:
    """The next payment of this bulk id (one not carried out yet, or the next pay call's) fails at
    Prolific after it accepted it: it never arrives."""
    with fake.lock:
        pending = [p for p in fake.state.get("payments_due", []) if p["bulk"] == bulk_id and not p["fails"]]
        if pending:
            pending[0]["fails"] = True
        else:
            fake.state.setdefault("payments_failing", set()).add(bulk_id)


def _answer_late(fake, seconds: float) -> None:
    # Carried out already: the answer waits, without holding the fake's lock (the client may
    # time out meanwhile and read the submissions).
    fake.lock.release()
    try:
        time.sleep(seconds)
    finally:
        fake.lock.acquire()


def pays_of(fake, bulk_id: str) -> int:
    """How many times the bulk bonus payment was paid (pay calls accepted)."""
    return copy.deepcopy(fake.state.get("bonus_batches", {}).get(bulk_id, {}).get("pays", 0))
