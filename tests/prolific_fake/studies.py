"""Studies, screeners (filters) and participant groups, as Prolific's API v1 documents them
(rules.py quotes the rules): create a draft, read and update it, move it through its statuses,
list the screeners, make a participant group and add participants to it."""

import copy
from datetime import UTC, datetime

from tests.prolific_fake import rules
from tests.prolific_fake.server import known_fields, not_found, route

STUDIES = f"{rules.API_REFERENCE}/studies"
GROUPS = f"{rules.API_REFERENCE}/participant-groups"

CREATE_FIELDS = {
    "name", "internal_name", "description", "external_study_url", "access_details", "prolific_id_option",
    "completion_codes", "total_available_places", "estimated_completion_time", "maximum_allowed_time", "reward",
    "device_compatibility", "peripheral_requirements", "filters", "filter_set_id", "filter_set_version",
    "naivety_distribution_rate", "project", "submissions_config", "study_labels", "content_warnings",
    "content_warning_details", "metadata", "is_custom_screening", "privacy_notice", "publish_at",
}  # fmt: skip
REQUIRED = ("name", "description", "prolific_id_option", "completion_codes", "total_available_places",
            "estimated_completion_time", "reward")  # fmt: skip
PROLIFIC_ID_OPTIONS = ("question", "url_parameters", "not_required")
DEVICES = ("desktop", "tablet", "mobile")
PERIPHERALS = ("audio", "camera", "download", "microphone")


@route("GET", r"filters/", page="https://docs.prolific.com/documentation/core-concepts/finding-the-right-participants")
def filters_list(fake, request):
    return 200, {"results": copy.deepcopy(fake.state["filters"])}


@route("POST", r"studies/", page=f"{STUDIES}/create-study")
def study_create(fake, request):
    body = request.body
    _known_fields(body, CREATE_FIELDS)
    missing = [name for name in REQUIRED if body.get(name) in (None, "", [])]
    if missing:
        raise rules.UNKNOWN_FIELDS.broken({name: ["This field is required."] for name in missing})
    _check_study(fake, body)
    study = {
        **copy.deepcopy(body),
        "id": fake.new_id(),
        "status": "UNPUBLISHED",
        "places_taken": 0,
        "number_of_submissions": 0,
        "date_created": datetime.now(UTC).isoformat(),
        "published_at": None,
    }
    fake.state["studies"][study["id"]] = study
    return 201, copy.deepcopy(study)


@route("GET", r"studies/", page=f"{STUDIES}/get-studies", query=("state",))
def studies_list(fake, request):
    """GET /api/v1/studies/ ("List all studies"); ?state= narrows it by status: one, or "(a|b|...)"."""
    wanted = _states(request.query_value("state"))
    studies = [s for s in fake.state["studies"].values() if wanted is None or s["status"] in wanted]
    return 200, {"results": copy.deepcopy(studies)}


def _states(value: str | None) -> set[str] | None:
    if value is None:
        return None
    names = {name.strip().upper() for name in value.strip("()").split("|")}
    unknown = sorted(names - set(rules.STUDY_STATUSES))
    if unknown:
        raise rules.QUERY_PARAMETERS.broken({"state": [f"Not a study status: {', '.join(unknown)}."]})
    return names


@route("GET", r"studies/(?P<id>[^/]+)/", page=f"{STUDIES}/get-study")
def study_get(fake, request):
    return 200, copy.deepcopy(_study(fake, request.params["id"]))


@route("PATCH", r"studies/(?P<id>[^/]+)/", page=f"{STUDIES}/update-study")
def study_update(fake, request):
    study = _study(fake, request.params["id"])
    body = request.body
    _known_fields(body, CREATE_FIELDS)
    if study["status"] != "UNPUBLISHED":
        frozen = sorted(set(body) - rules.MUTABLE_AFTER_PUBLISH)
        if frozen:
            raise rules.IMMUTABLE_AFTER_PUBLISH.broken(
                f"Cannot change {', '.join(frozen)} of a study in status {study['status']}."
            )
    if "total_available_places" in body:
        places = body["total_available_places"]
        if not isinstance(places, int) or places < 1:
            raise rules.PLACES_ONLY_INCREASE.broken({"total_available_places": ["A positive whole number is needed."]})
        if study["status"] != "UNPUBLISHED" and places < study["total_available_places"]:
            raise rules.PLACES_ONLY_INCREASE.broken(
                f"total_available_places can only be increased: {places} < {study['total_available_places']}."
            )
    _check_study(fake, {**study, **body})
    study.update(copy.deepcopy(body))
    if study["status"] in ("AWAITING REVIEW", "COMPLETED") and study["places_taken"] < study["total_available_places"]:
        study["status"] = "ACTIVE"  # more places reopen a study that had run out (mephisto's "oddities")
    return 200, copy.deepcopy(study)


@route("POST", r"studies/(?P<id>[^/]+)/transition/", page=f"{STUDIES}/transition-study")
def study_transition(fake, request):
    study = _study(fake, request.params["id"])
    action = request.body.get("action")
    _known_fields(request.body, {"action", "publish_at"})
    if action not in rules.ALLOWED_TRANSITIONS:
        raise rules.TRANSITIONS.broken({"action": [f'"{action}" is not a valid choice.']})
    allowed_from, to = rules.ALLOWED_TRANSITIONS[action]
    if study["status"] not in allowed_from:
        raise rules.TRANSITIONS.broken(f"Cannot {action} a study in status {study['status']}.")
    study["status"] = to
    if action == "PUBLISH":
        study["published_at"] = datetime.now(UTC).isoformat()
    return 200, copy.deepcopy(study)


@route("POST", r"participant-groups/", page=f"{GROUPS}/create-participant-group")
def participant_group_create(fake, request):
    body = request.body
    _known_fields(body, {"name", "workspace_id", "organisation_id", "description", "participant_ids"})
    if not body.get("name"):
        raise rules.PARTICIPANT_GROUPS.broken({"name": ["This field is required."]})
    if not (body.get("workspace_id") or body.get("organisation_id")):
        raise rules.PARTICIPANT_GROUPS.broken("Either a workspace or organisation ID must be specified.")
    group = {
        "id": fake.new_id(),
        "name": body["name"],
        "description": body.get("description", ""),
        "workspace_id": body.get("workspace_id"),
        "organisation_id": body.get("organisation_id"),
        "is_deleted": False,
        "feeder_studies": [],
    }
    fake.state["groups"][group["id"]] = group
    fake.state["group_members"][group["id"]] = {}
    _add_members(fake, group["id"], body.get("participant_ids") or [])
    return 201, _group(fake, group["id"])


@route("GET", r"participant-groups/(?P<id>[^/]+)/", page=f"{GROUPS}/get-participant-group")
def participant_group_get(fake, request):
    return 200, _group(fake, request.params["id"])


@route("POST", r"participant-groups/(?P<id>[^/]+)/participants/", page=f"{GROUPS}/add-to-participant-group")
def participant_group_add(fake, request):
    group_id = request.params["id"]
    _group(fake, group_id)
    _known_fields(request.body, {"participant_ids"})
    ids = request.body.get("participant_ids")
    if not isinstance(ids, list) or not all(isinstance(pid, str) and pid for pid in ids):
        raise rules.PARTICIPANT_GROUPS.broken({"participant_ids": ["A list of participant ids is needed."]})
    _add_members(fake, group_id, ids)
    return 200, {"results": _members(fake, group_id)}


@route("GET", r"participant-groups/(?P<id>[^/]+)/participants/", page=f"{GROUPS}/get-participant-group-participants")
def participant_group_members(fake, request):
    _group(fake, request.params["id"])
    return 200, {"results": _members(fake, request.params["id"])}


# --- checks ------------------------------------------------------------------------------------


def _known_fields(body, allowed: set) -> None:
    if not isinstance(body, dict):
        raise rules.JSON_OBJECT.broken("This endpoint expects an object.")
    known_fields(body, allowed)


def _check_study(fake, study: dict) -> None:
    if study.get("prolific_id_option") not in PROLIFIC_ID_OPTIONS:
        raise rules.UNKNOWN_FIELDS.broken({"prolific_id_option": [f"One of {', '.join(PROLIFIC_ID_OPTIONS)}."]})
    _check_url(study.get("external_study_url"), study.get("access_details"))
    for name in ("reward", "total_available_places", "estimated_completion_time"):
        value = study.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            rule = rules.REWARD_IN_CENTS if name == "reward" else rules.UNKNOWN_FIELDS
            raise rule.broken({name: ["A positive whole number is needed."]})
    _check_choices("device_compatibility", study.get("device_compatibility", []), DEVICES)
    _check_choices("peripheral_requirements", study.get("peripheral_requirements", []), PERIPHERALS)
    _check_codes(fake, study.get("completion_codes"))
    _check_filters(fake, study.get("filters", []))


def _check_url(url, access_details) -> None:
    if access_details:
        return
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise rules.EXTERNAL_URL.broken({"external_study_url": ["Enter a valid URL."]})
    for placeholder in _placeholders(url):
        if placeholder not in rules.PLACEHOLDERS:
            raise rules.EXTERNAL_URL.broken({"external_study_url": [f"Unknown placeholder {placeholder}."]})


def _placeholders(url: str) -> list[str]:
    found, start = [], url.find("{{%")
    while start != -1:
        end = url.find("%}}", start)
        found.append(url[start : end + 3] if end != -1 else url[start:])
        start = url.find("{{%", start + 3)
    return found


def _check_choices(name: str, values, allowed) -> None:
    if not isinstance(values, list) or any(value not in allowed for value in values):
        raise rules.UNKNOWN_FIELDS.broken({name: [f"Each one of {', '.join(allowed)}."]})


def _check_codes(fake, codes) -> None:
    if not isinstance(codes, list) or not codes:
        raise rules.COMPLETION_CODES.broken({"completion_codes": ["Specify at least one completion code."]})
    seen = set()
    for code in codes:
        _known_fields(code, {"code", "code_type", "actions", "actor"})
        if not code.get("code") or code["code"] in seen:
            raise rules.COMPLETION_CODES.broken(
                {"completion_codes": [f"Each code must be unique: {code.get('code')}."]}
            )
        seen.add(code["code"])
        if code.get("code_type") not in rules.CODE_TYPES:
            raise rules.COMPLETION_CODES.broken({"code_type": [f'"{code.get("code_type")}" is not a valid choice.']})
        actions = code.get("actions")
        if not isinstance(actions, list):
            raise rules.COMPLETION_CODES.broken({"actions": ["A list of actions is needed."]})
        names = [action.get("action") for action in actions]
        if set(names) >= rules.EXCLUSIVE_ACTIONS:
            raise rules.COMPLETION_CODES.broken("AUTOMATICALLY_APPROVE and MANUALLY_REVIEW can't be used together.")
        for action in actions:
            _check_action(fake, action)


def _check_action(fake, action: dict) -> None:
    name = action.get("action")
    if name not in rules.CODE_ACTIONS:
        raise rules.COMPLETION_CODES.broken({"action": [f'"{name}" is not a valid choice.']})
    needed = rules.CODE_ACTIONS[name]
    _known_fields(action, {"action", *needed})
    missing = sorted(field for field in needed if action.get(field) in (None, ""))
    if missing:
        raise rules.COMPLETION_CODES.broken({name: [f"{', '.join(missing)} required."]})
    if name == "FIXED_SCREEN_OUT_PAYMENT":
        for field in ("fixed_screen_out_reward", "slots"):
            if not isinstance(action[field], int) or action[field] < 1:
                raise rules.COMPLETION_CODES.broken({field: ["A positive whole number is needed."]})
    if "participant_group" in needed and action["participant_group"] not in fake.state["groups"]:
        raise rules.COMPLETION_CODES.broken({"participant_group": ["No such participant group."]})


def _check_filters(fake, filters) -> None:
    if not isinstance(filters, list):
        raise rules.FILTERS.broken({"filters": ["A list is needed."]})
    catalog = {item["filter_id"]: item for item in fake.state["filters"]}
    for given in filters:
        _known_fields(given, {"filter_id", "selected_values", "selected_range", "weightings"})
        known = catalog.get(given.get("filter_id"))
        if known is None:
            raise rules.FILTERS.broken({"filter_id": [f"Unknown filter {given.get('filter_id')!r}."]})
        if known["type"] == "select":
            _check_select(fake, known, given)
        else:
            _check_range(known, given)


def _check_select(fake, known: dict, given: dict) -> None:
    values = given.get("selected_values")
    choices = fake.state["groups"] if known["choices"] == "participant_groups" else known["choices"]
    if "selected_range" in given or not isinstance(values, list) or not values:
        raise rules.FILTERS.broken({known["filter_id"]: ["A select filter needs selected_values."]})
    unknown = [value for value in values if value not in choices]
    if unknown:
        raise rules.FILTERS.broken({known["filter_id"]: [f"Not among its choices: {', '.join(map(str, unknown))}."]})


def _check_range(known: dict, given: dict) -> None:
    bounds = given.get("selected_range")
    if "selected_values" in given or not isinstance(bounds, dict) or set(bounds) - {"lower", "upper"} or not bounds:
        raise rules.FILTERS.broken({known["filter_id"]: ["A range filter needs selected_range {lower, upper}."]})
    lower, upper = bounds.get("lower", known["min"]), bounds.get("upper", known["max"])
    if not (known["min"] <= lower <= upper <= known["max"]):
        raise rules.FILTERS.broken(
            {known["filter_id"]: [f"Range {lower}-{upper} outside {known['min']}-{known['max']}."]}
        )


# --- state --------------------------------------------------------------------------------------


def _study(fake, study_id: str) -> dict:
    if study_id not in fake.state["studies"]:
        raise not_found("Study")
    return fake.state["studies"][study_id]


def _group(fake, group_id: str) -> dict:
    if group_id not in fake.state["groups"]:
        raise not_found("participant group")
    return {
        **copy.deepcopy(fake.state["groups"][group_id]),
        "participant_count": len(fake.state["group_members"][group_id]),
    }


def _add_members(fake, group_id: str, participant_ids: list[str]) -> None:
    members = fake.state["group_members"][group_id]
    for pid in participant_ids:
        members.setdefault(pid, datetime.now(UTC).isoformat())  # already a member: ignored


def _members(fake, group_id: str) -> list[dict]:
    return [
        {"participant_id": pid, "datetime_created": when} for pid, when in fake.state["group_members"][group_id].items()
    ]
