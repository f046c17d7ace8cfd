"""A study's submissions as Prolific's API v1 lists them (rules.py: SUBMISSION_STATUSES), and the
test's way of moving one: `submission_add`, `submission_status_set` (which sends the
submission.status.change webhook to every confirmed subscription, as Prolific does)."""

import copy
from datetime import UTC, datetime

from tests.prolific_fake import rules
from tests.prolific_fake.server import not_found, route


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
            "bonus_payments": [],  # the cents of each bonus paid on this submission
        }
        fake.state.setdefault("submissions", {})[submission["id"]] = submission
    return copy.deepcopy(submission)


def submission_status_set(fake, submission_id: str, status: str, *, notify: bool = True) -> None:
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
    if notify:
        from tests.prolific_fake.webhooks import event_send

        event_send(fake, event)


def _check_status(status: str) -> None:
    if status not in rules.SUBMISSION_STATUS_NAMES:
        raise ValueError(f"{status!r} is not one of Prolific's submission statuses")


@route("GET", r"studies/(?P<id>[^/]+)/submissions/")
def submissions_list(fake, request):
    study_id = request.params["id"]
    found = [s for s in fake.state.get("submissions", {}).values() if s["study_id"] == study_id]
    if not found and study_id not in fake.state["studies"]:
        raise not_found("study")
    page_size = int(request.query.get("limit", ["200"])[0])
    offset = int(request.query.get("offset", ["0"])[0])
    page = found[offset : offset + page_size]
    following = offset + page_size < len(found)
    next_href = f"{fake.url}studies/{study_id}/submissions/?limit={page_size}&offset={offset + page_size}"
    return 200, {
        "results": copy.deepcopy(page),
        "_links": {"self": {"href": None}, "next": {"href": next_href if following else None}},
        "meta": {"count": len(found)},
    }


@route("GET", r"submissions/(?P<id>[^/]+)/")
def submission_get(fake, request):
    submission = fake.state.get("submissions", {}).get(request.params["id"])
    if submission is None:
        raise not_found("submission")
    return 200, copy.deepcopy(submission)
