"""Bonuses as Prolific's API v1 documents them (rules.py: BONUS_SETUP, PAY_NOT_IDEMPOTENT,
PAY_TWICE_PAYS_TWICE): set up a bulk bonus payment from CSV lines (pays nothing), then pay it;
every pay call pays again. `fake.state["pay_stall_seconds"]`: the pay call is carried out, then its
answer waits that long (a client that times out has been accepted all the same)."""

import copy
import time
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from tests.prolific_fake import rules
from tests.prolific_fake.server import not_found, route

SETUP_FIELDS = {"study_id", "csv_bonuses"}
CENT = Decimal("0.01")


@route("POST", r"submissions/bonus-payments/")
def bonus_setup(fake, request):
    body = request.body
    unknown = sorted(set(body) - SETUP_FIELDS)
    if unknown:
        raise rules.UNKNOWN_FIELDS.broken({name: ["Unknown field."] for name in unknown})
    study_id, csv = body.get("study_id"), body.get("csv_bonuses")
    if not study_id or not isinstance(csv, str) or not csv.strip():
        raise rules.BONUS_SETUP.broken({"csv_bonuses": ["study_id and csv_bonuses are required."]})
    taken_part = {
        key: s
        for s in fake.state.get("submissions", {}).values()
        if s["study_id"] == study_id
        for key in (s["participant_id"], s["id"])
    }
    lines = [_line(number, text, taken_part) for number, text in enumerate(csv.strip().split("\n"), start=1)]
    amount = sum((cents for _, cents in lines), 0)
    fees = int((Decimal(amount) * rules.BONUS_FEE_RATE).quantize(Decimal(1), ROUND_HALF_UP))
    bulk = {"id": fake.new_id(), "study": study_id, "lines": lines, "amount": amount, "fees": fees, "pays": 0}
    fake.state.setdefault("bonus_batches", {})[bulk["id"]] = bulk
    return 201, {
        "id": bulk["id"],
        "study": study_id,
        "amount": _money(amount),
        "fees": _money(fees),
        "vat": 0,
        "total_amount": _money(amount + fees),
    }


def _line(number: int, text: str, taken_part: dict) -> tuple[str, int]:
    parts = text.strip().split(",")
    if len(parts) != 2:
        raise rules.BONUS_SETUP.broken({"csv_bonuses": [f"line {number}: expected <participant id>,<amount>"]})
    who, raw_amount = parts[0].strip(), parts[1].strip()
    try:
        amount = Decimal(raw_amount).quantize(CENT)
    except InvalidOperation:
        raise rules.BONUS_SETUP.broken({"csv_bonuses": [f"line {number}: {raw_amount!r} is not an amount"]}) from None
    if amount <= 0:
        raise rules.BONUS_SETUP.broken({"csv_bonuses": [f"line {number}: the amount must be more than 0"]})
    if who not in taken_part:
        raise rules.BONUS_SETUP.broken({"csv_bonuses": [f"line {number}: {who} has not taken part in the study"]})
    return taken_part[who]["id"], int(amount * 100)


def _money(cents: int) -> float:
    return float(Decimal(cents) / 100)


@route("POST", r"bulk-bonus-payments/(?P<id>[^/]+)/pay/")
def bonus_pay(fake, request):
    bulk = fake.state.get("bonus_batches", {}).get(request.params["id"])
    if bulk is None:
        raise not_found("bulk bonus payment")
    # PAY_TWICE_PAYS_TWICE: no memory of an earlier call; each one pays every line again.
    bulk["pays"] += 1
    for submission_id, cents in bulk["lines"]:
        fake.state["submissions"][submission_id]["bonus_payments"].append(cents)
    stall = fake.state.get("pay_stall_seconds", 0)
    if stall:
        _answer_late(fake, stall)
    return 200, (
        f"Bulk bonus payment with ID {bulk['id']} is being processed asynchronously. Payments will be completed shortly."
    )


def _answer_late(fake, seconds: float) -> None:
    # Carried out already: the answer waits, without holding the fake's lock (the client may
    # time out meanwhile and read the submissions).
    fake.lock.release()
    try:
        time.sleep(seconds)
    finally:
        fake.lock.acquire()


def pays_of(fake, bulk_id: str) -> int:
    """How many times the bulk bonus payment was paid."""
    return copy.deepcopy(fake.state.get("bonus_batches", {}).get(bulk_id, {}).get("pays", 0))
