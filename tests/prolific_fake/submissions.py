"""Submissions as Prolific's API v1 documents them (rules.py: SUBMISSION_STATUSES,
BONUS_PAYMENTS_IN_CENTS, SUBMISSION_TRANSITION, REJECTION_MESSAGE, REQUEST_RETURN, BULK_APPROVE):
a study's submissions listed and read, approved or rejected one at a time or in bulk, and a return
requested. The test's way of moving one: `submission_add`, `took_part` (a participant of ours, by
their study link's ids), `submission_status_set` (which sends the submission.status.change webhook to
every confirmed subscription, as Prolific does)."""

import copy
from datetime import UTC, datetime

from tests.prolific_fake import rules
from tests.prolific_fake.server import known_fields, not_found, route

SUBMISSIONS = f"{rules.API_REFERENCE}/submissions"
PAGE_SIZE = 20  # the list's default page (get-submissions: "Default page_size is 20")
ORDERING = ("started_at", "completed_at", "status", "ip", "time_taken", "participant_id", "study_code")
OPEN = ("ACTIVE", "AWAITING REVIEW")


def submission_add(fake, *, study_id: str, participant_id: str, submission_id: str = "", status: str = "ACTIVE"):
    """A participant starting the study (Prolific makes the submission; its id is the SESSION_ID)."""
    _check_status(status)
    with fake.lock:
        submission = {
            "id": submission_id or fake.new_id(),
            "participant_id": participant_id,
            "study_id": study_id,
            "status": status,
            "started_at": datetime.now(UTC).isoformat(),
            "completed_at": None,
            "return_requested": None,
            "bonus_payments": [],  # BONUS_PAYMENTS_IN_CENTS: doubles, in cents, once paid
        }
        fake.state.setdefault("submissions", {})[submission["id"]] = submission
    return copy.deepcopy(submission)


def took_part(fake, participant, *, status: str = "AWAITING REVIEW"):
    """The submission of one of our participants, by the ids their study link carried."""
    return submission_add(
        fake,
        study_id=participant.prolific_study_id,
        participant_id=participant.prolific_pid,
        submission_id=participant.prolific_session_id,
        status=status,
    )


def submission_status_set(fake, submission_id: str, status: str, *, notify: bool = True) -> list:
    """Move a submission (as its participant or Prolific would); `notify`: send the webhook."""
    _check_status(status)
    with fake.lock:
        submission = fake.state["submissions"][submission_id]
        submission["status"] = status
        event = {
            "resource_id": submission_id,
            "event_type": "submission.status.change",
            "participant_id": submission["participant_id"],
            "status": status,
        }
    if not notify:
        return []
    from tests.prolific_fake.webhooks import event_send

    return event_send(fake, event)


def submission_of(fake, submission_id: str) -> dict:
    """What Prolific holds of the submission now (payments due by now settled)."""
    _settle(fake)
    return copy.deepcopy(fake.state["submissions"][submission_id])


def _check_status(status: str) -> None:
    if status not in rules.SUBMISSION_STATUS_NAMES:
        raise ValueError(
            f"{status!r} is not one of Prolific's submission statuses ({rules.SUBMISSIONS}/submission-object)"
        )


def _settle(fake) -> None:
    from tests.prolific_fake.bonuses import payments_settle  # bonuses registers routes too

    payments_settle(fake)


# --- reading ----------------------------------------------------------------------------------


@route(
    "GET",
    r"studies/(?P<id>[^/]+)/submissions/",
    page=f"{rules.API_REFERENCE}/studies/get-study-submissions",
    query=("ordering", "limit", "offset"),
)
def submissions_list(fake, request):
    ordering = request.query_value("ordering")
    _check_ordering(ordering)
    limit = _whole(request, "limit", PAGE_SIZE, minimum=1)
    offset = _whole(request, "offset", 0, minimum=0)
    _settle(fake)
    study_id = request.params["id"]
    found = [s for s in fake.state.get("submissions", {}).values() if s["study_id"] == study_id]
    if not found and study_id not in fake.state["studies"]:
        raise not_found("study")
    found = _ordered(found, ordering)
    page = found[offset : offset + limit]
    following = offset + limit < len(found)
    next_href = f"{fake.url}studies/{study_id}/submissions/?limit={limit}&offset={offset + limit}"
    return 200, {
        "results": copy.deepcopy(page),
        "_links": {"self": {"href": None}, "next": {"href": next_href if following else None}},
        "meta": {"count": len(found)},
    }


def _ordered(found: list[dict], ordering: str | None) -> list[dict]:
    if ordering is None:
        return found
    return sorted(found, key=lambda s: str(s.get(ordering.removeprefix("-")) or ""), reverse=ordering.startswith("-"))


def _check_ordering(ordering: str | None) -> None:
    if ordering is not None and ordering.removeprefix("-") not in ORDERING:
        raise rules.QUERY_PARAMETERS.broken({"ordering": [f"Allowed values: {', '.join(ORDERING)}."]})


def _whole(request, name: str, default: int, *, minimum: int) -> int:
    raw = request.query_value(name)
    if raw is None:
        return default
    if not raw.isdigit() or int(raw) < minimum:
        raise rules.QUERY_PARAMETERS.broken({name: [f"A whole number of at least {minimum} is needed."]})
    return int(raw)


@route("GET", r"submissions/(?P<id>[^/]+)/", page=f"{SUBMISSIONS}/get-submission")
def submission_get(fake, request):
    _settle(fake)
    submission = _submission(fake, request.params["id"])
    # get-submission's fields: `participant`, where the lists say `participant_id`.
    shown = {key: value for key, value in submission.items() if key != "participant_id"}
    return 200, {**copy.deepcopy(shown), "participant": submission["participant_id"]}


def _submission(fake, submission_id: str) -> dict:
    submission = fake.state.get("submissions", {}).get(submission_id)
    if submission is None:
        raise not_found("Submission")
    return submission


# --- deciding ---------------------------------------------------------------------------------


@route("POST", r"submissions/(?P<id>[^/]+)/transition/", page=f"{SUBMISSIONS}/transition-submission")
def submission_transition(fake, request):
    submission = _submission(fake, request.params["id"])
    body = request.body
    known_fields(body, {"action", "message", "rejection_category", "completion_code", "completion_code_data"})
    action = body.get("action")
    if action not in rules.SUBMISSION_ACTIONS:
        raise rules.SUBMISSION_TRANSITION.broken({"action": [f'"{action}" is not a valid choice here.']})
    if action == "REJECT":
        _check_rejection(body)
    status = rules.SUBMISSION_ACTIONS[action]
    if submission["status"] == status:
        return 200, _transition_answer(submission)  # the same request again: ignored
    if submission["status"] != "AWAITING REVIEW":
        raise rules.SUBMISSION_TRANSITION.broken(
            f"Cannot {action.lower()} a submission in status {submission['status']}: once changed, it cannot be "
            "restored."
        )
    submission["status"] = status
    submission["completed_at"] = submission["completed_at"] or datetime.now(UTC).isoformat()
    return 200, _transition_answer(submission)


def _check_rejection(body: dict) -> None:
    problems = {}
    if body.get("rejection_category") not in rules.REJECTION_CATEGORIES:
        problems["rejection_category"] = [f"One of {', '.join(rules.REJECTION_CATEGORIES)} is required."]
    message = body.get("message")
    if not isinstance(message, str) or len(message) < rules.MIN_REJECTION_MESSAGE:
        problems["message"] = [f"Ensure this field has at least {rules.MIN_REJECTION_MESSAGE} characters."]
    if problems:
        raise rules.REJECTION_MESSAGE.broken(problems)


def _transition_answer(submission: dict) -> dict:
    return {
        "id": submission["id"],
        "status": submission["status"],
        "participant": submission["participant_id"],
        "completed_at": submission["completed_at"],
    }


@route("POST", r"submissions/(?P<id>[^/]+)/request-return/", page=f"{SUBMISSIONS}/request-submission-return")
def submission_request_return(fake, request):
    submission = _submission(fake, request.params["id"])
    body = request.body
    known_fields(body, {"request_return_reasons"})
    reasons = body.get("request_return_reasons")
    if not isinstance(reasons, list) or not reasons or not all(isinstance(r, str) and r.strip() for r in reasons):
        raise rules.REQUEST_RETURN.broken({"request_return_reasons": ["A list of reasons is required."]})
    if submission["status"] not in OPEN:
        raise rules.REQUEST_RETURN.broken(f"Cannot ask to return a submission in status {submission['status']}.")
    submission["return_requested"] = datetime.now(UTC).isoformat()
    submission["return_reasons"] = list(reasons)
    return 200, {
        "id": submission["id"],
        "status": submission["status"],
        "participant": submission["participant_id"],
        "return_requested": submission["return_requested"],
    }


@route("POST", r"submissions/bulk-approve/", page=f"{SUBMISSIONS}/bulk-approve-submissions")
def submissions_bulk_approve(fake, request):
    body = request.body
    known_fields(body, {"study_id", "participant_ids", "submission_ids"})
    chosen = _bulk_targets(fake, body)
    waiting = [s for s in chosen if s["status"] != "APPROVED"]
    not_ready = sorted(s["id"] for s in waiting if s["status"] != "AWAITING REVIEW")
    if not_ready:
        raise rules.BULK_APPROVE.broken(f"Not awaiting review: {', '.join(not_ready)}.")
    for submission in waiting:
        submission["status"] = "APPROVED"
    return 200, "Bulk approve in progress"


def _bulk_targets(fake, body: dict) -> list[dict]:
    submissions = fake.state.get("submissions", {})
    by_ids, by_study = "submission_ids" in body, "study_id" in body or "participant_ids" in body
    if by_ids == by_study:
        raise rules.BULK_APPROVE.broken("Give either study_id and participant_ids, or submission_ids.")
    if by_ids:
        ids = _id_list(body, "submission_ids")
        missing = [sid for sid in ids if sid not in submissions]
        if missing:
            raise rules.BULK_APPROVE.broken({"submission_ids": [f"Unknown: {', '.join(missing)}."]})
        return [submissions[sid] for sid in ids]
    study_id, ids = body.get("study_id"), _id_list(body, "participant_ids")
    if not isinstance(study_id, str) or not study_id:
        raise rules.BULK_APPROVE.broken({"study_id": ["This field is required."]})
    of_study = {s["participant_id"]: s for s in submissions.values() if s["study_id"] == study_id}
    missing = [pid for pid in ids if pid not in of_study]
    if missing:
        raise rules.BULK_APPROVE.broken({"participant_ids": [f"Not in study {study_id}: {', '.join(missing)}."]})
    return [of_study[pid] for pid in ids]


def _id_list(body: dict, name: str) -> list[str]:
    ids = body.get(name)
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
        raise rules.BULK_APPROVE.broken({name: ["A non-empty list of ids is required."]})
    return ids
