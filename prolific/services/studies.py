"""Running one of our studies on Prolific: propose its draft, create it there, publish, pause,
resume, stop, keep our status mirroring Prolific's, grow its places as the clips need, and add
its participants to a participant group.

The draft uses Prolific's current study model: a `completion_codes` array with per-code actions
and `filters` (screeners resolved against GET /filters/), not the retired `completion_code` and
`eligibility_requirements`. Which calls are retried is the client's business (prolific.client).
"""

import logging
import math
import threading
from dataclasses import dataclass

from django.conf import settings
from django.db import connections, transaction
from django.urls import reverse
from django.utils import timezone

from annotation.models import Participant, Study
from annotation.services.studies import language_name, study_status_refusal, task_minutes_estimate
from annotation.services.topups import topup_plan
from prolific.client import ProlificClient, ProlificError
from prolific.models import ProlificParticipantGroup, ProlificStudy

logger = logging.getLogger(__name__)

# Prolific's education levels from an undergraduate degree up (MMEE's prerequisite).
UNDERGRADUATE_OR_HIGHER = [
    "Undergraduate degree (BA/BSc/other)",
    "Graduate degree (MA/MSc/MPhil/other)",
    "Doctorate degree (PhD/other)",
]
# The answer to "Do you have any hearing (literacy) difficulties?" that MMEE accepted.
NO_DIFFICULTIES = "No"
# Our status for each of Prolific's: ours follows theirs, never the other way round.
MIRRORED_STATUS = {
    ProlificStudy.Status.UNPUBLISHED: Study.Status.DRAFT,
    ProlificStudy.Status.PUBLISHING: Study.Status.DRAFT,
    ProlificStudy.Status.SCHEDULED: Study.Status.DRAFT,
    ProlificStudy.Status.ACTIVE: Study.Status.LIVE,
    ProlificStudy.Status.PAUSED: Study.Status.PAUSED,
    ProlificStudy.Status.AWAITING_REVIEW: Study.Status.CLOSED,
    ProlificStudy.Status.COMPLETED: Study.Status.CLOSED,
}
# What each of our buttons asks of Prolific, and the statuses it may be asked in.
ACTIONS = {
    "publish": ("PUBLISH", {ProlificStudy.Status.UNPUBLISHED}),
    "pause": ("PAUSE", {ProlificStudy.Status.ACTIVE}),
    "resume": ("START", {ProlificStudy.Status.PAUSED}),
    "stop": ("STOP", {ProlificStudy.Status.ACTIVE, ProlificStudy.Status.PAUSED}),
}
EDITABLE_WHILE_RUNNING = {"places_ceiling", "auto_grow", "bonus_budget_cents"}
# What a researcher sets on a Prolific study, in the admin's form and in the API alike.
RESEARCHER_FIELDS = [
    "study", "name", "description", "estimated_minutes", "hourly_rate_cents", "reward_cents", "places",
    "places_ceiling", "auto_grow", "device_compatibility", "peripheral_requirements", "language",
    "approval_rate_min", "approval_rate_max", "approvals_min", "education", "no_hearing_difficulties",
    "no_literacy_difficulties", "exclude_group", "screen_out_reward_cents", "screen_out_slots",
    "attention_failed_code", "bonus_budget_cents",
]  # fmt: skip


class ProlificSetupError(Exception):
    """Something the researcher must fix before Prolific can be asked (the message says what)."""


def prolific_client(study: Study) -> ProlificClient:
    client = ProlificClient.from_settings(study=study)
    if client is None:
        raise ProlificSetupError("PROLIFIC_API_TOKEN is not set: nothing was sent to Prolific.")
    return client


# --- the draft ----------------------------------------------------------------------------------


def reward_cents_for(*, minutes: int, hourly_rate_cents: int) -> int:
    """The reward for `minutes` at the hourly rate, rounded up to a whole cent (never under the rate)."""
    return math.ceil(hourly_rate_cents * minutes / 60)


def prolific_study_propose(*, study: Study, hourly_rate_cents: int = 1500) -> ProlificStudy:
    """An unsaved ProlificStudy with MMEE's settings: minutes from the clips (two hearings plus
    marking, as the demo's estimate), the reward at the hourly rate, the places the clips need."""
    minutes = task_minutes_estimate(study)
    plan = topup_plan(study=study)
    return ProlificStudy(
        study=study,
        name=study.name,
        description=(
            f"Listen to short recordings in {language_name(study.language)} and mark the words the speaker "
            f"stresses. About {minutes} minutes; headphones or speakers needed."
        ),
        estimated_minutes=minutes,
        hourly_rate_cents=hourly_rate_cents,
        reward_cents=reward_cents_for(minutes=minutes, hourly_rate_cents=hourly_rate_cents),
        places=max(1, study.places or plan.total.places_needed),
        device_compatibility=["desktop"],
        peripheral_requirements=["audio"],
        language=prolific_language(study.language),
        education=list(UNDERGRADUATE_OR_HIGHER),
    )


def prolific_language(code: str) -> str:
    """Prolific's name of a language ('en-GB' -> 'English'), from our code."""
    from django.utils import translation

    with translation.override("en"):
        name = language_name(code.replace("_", "-").split("-")[0]) if code else ""
    return name


def external_study_url(*, study: Study, site_url: str) -> str:
    """Our participant link with Prolific's three placeholders (the entry page reads them)."""
    link = site_url.rstrip("/") + reverse("annotation:entry", args=[study.slug])
    return f"{link}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"


def completion_codes(prolific_study: ProlificStudy) -> list[dict]:
    """Completed (reviewed by us), screened out (a fixed payment, Prolific pays it), failed an
    attention check (reviewed). The first two are the codes our pages show and redirect to."""
    study = prolific_study.study
    return [
        {"code": study.completion_code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]},
        {
            "code": study.screen_out_code,
            "code_type": "FIXED_SCREENOUT",
            "actions": [
                {
                    "action": "FIXED_SCREEN_OUT_PAYMENT",
                    "fixed_screen_out_reward": prolific_study.screen_out_reward_cents,
                    "slots": prolific_study.screen_out_slots,
                }
            ],
        },
        {
            "code": prolific_study.attention_failed_code,
            "code_type": "FAILED_ATTENTION_CHECK",
            "actions": [{"action": "MANUALLY_REVIEW"}],
        },
    ]


def prolific_filters(prolific_study: ProlificStudy, catalog: list[dict], filter_ids: dict) -> list[dict]:
    """The screeners as Prolific's filters: choices named by their labels are resolved to the ids
    GET /filters/ gives; a screener or label Prolific does not know is a ProlificSetupError."""
    known = {item["filter_id"]: item for item in catalog}
    language = prolific_study.language
    wanted = [
        ("first_language", [language]),
        ("fluent_languages", [language]),
        ("approval_rate", (prolific_study.approval_rate_min, prolific_study.approval_rate_max)),
        ("approvals", (prolific_study.approvals_min, None)),
    ]
    if prolific_study.education:
        wanted.append(("education", prolific_study.education))
    if prolific_study.no_hearing_difficulties:
        wanted.append(("hearing_difficulties", [NO_DIFFICULTIES]))
    if prolific_study.no_literacy_difficulties:
        wanted.append(("literacy_difficulties", [NO_DIFFICULTIES]))
    filters = [_filter(known, filter_ids[key], value) for key, value in wanted]
    if prolific_study.exclude_group is not None:
        group_filter = filter_ids["exclude_group"]
        if group_filter not in known:
            raise ProlificSetupError(f"Prolific has no screener {group_filter!r} (PROLIFIC_FILTER_IDS exclude_group).")
        filters.append({"filter_id": group_filter, "selected_values": [prolific_study.exclude_group.prolific_id]})
    return filters


def _filter(known: dict, filter_id: str, value) -> dict:
    screener = known.get(filter_id)
    if screener is None:
        raise ProlificSetupError(
            f"Prolific has no screener {filter_id!r}: check PROLIFIC_FILTER_IDS against GET /filters/."
        )
    if screener["type"] == "range":
        lower, upper = value
        selected = {"lower": lower} if upper is None else {"lower": lower, "upper": upper}
        return {"filter_id": filter_id, "selected_range": selected}
    by_label = {label.casefold(): choice for choice, label in screener["choices"].items()}
    missing = [label for label in value if label.casefold() not in by_label]
    if missing:
        raise ProlificSetupError(f"Prolific's screener {filter_id!r} has no choice {', '.join(map(repr, missing))}.")
    return {"filter_id": filter_id, "selected_values": [by_label[label.casefold()] for label in value]}


def prolific_study_body(prolific_study: ProlificStudy, *, catalog: list[dict], site_url: str, filter_ids: dict) -> dict:
    study = prolific_study.study
    return {
        "name": prolific_study.name,
        "internal_name": f"{study.slug} (emphasis platform study {study.pk}, draft {prolific_study.pk})",
        "description": prolific_study.description,
        "external_study_url": external_study_url(study=study, site_url=site_url),
        "prolific_id_option": "url_parameters",
        "completion_codes": completion_codes(prolific_study),
        "total_available_places": prolific_study.places,
        "estimated_completion_time": prolific_study.estimated_minutes,
        "maximum_allowed_time": max(study.time_limit_minutes, prolific_study.estimated_minutes),
        "reward": prolific_study.reward_cents,
        "device_compatibility": prolific_study.device_compatibility,
        "peripheral_requirements": prolific_study.peripheral_requirements,
        "filters": prolific_filters(prolific_study, catalog, filter_ids),
    }


def prolific_study_create(*, prolific_study: ProlificStudy, site_url: str, filter_ids: dict) -> ProlificStudy:
    """Create the draft on Prolific (once: a study already created there is refused)."""
    if prolific_study.created_on_prolific:
        raise ProlificSetupError(f"Already created on Prolific as {prolific_study.prolific_id}.")
    client = prolific_client(prolific_study.study)
    body = prolific_study_body(prolific_study, catalog=client.filters_list(), site_url=site_url, filter_ids=filter_ids)
    # A create whose answer was lost (a killed worker, a timeout) made a draft all the same: take
    # that one rather than make a second. The internal name is ours alone.
    created = _draft_named(client, body["internal_name"]) or client.study_create(body)
    prolific_study.prolific_id = created["id"]
    prolific_study.body_sent = body
    prolific_study.save(update_fields=["prolific_id", "body_sent"])
    return _mirror(prolific_study, created)


def _draft_named(client: ProlificClient, internal_name: str) -> dict | None:
    drafts = client.studies_list(state=ProlificStudy.Status.UNPUBLISHED)
    return next((draft for draft in drafts if draft.get("internal_name") == internal_name), None)


# --- lifecycle ------------------------------------------------------------------------------------


def prolific_study_act(*, prolific_study: ProlificStudy, action: str) -> ProlificStudy:
    """publish, pause, resume or stop on Prolific; then ours mirrors what Prolific answered."""
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}")
    transition, allowed = ACTIONS[action]
    client = prolific_client(prolific_study.study)
    current = prolific_study_sync(prolific_study=prolific_study, client=client)  # never act on a stale status
    if current.status not in allowed:
        raise ProlificSetupError(f"Cannot {action} a study that is {current.get_status_display().lower()} on Prolific.")
    if action in ("publish", "resume"):
        # Prolific would send participants to a study of ours that cannot take them yet.
        refusal = study_status_refusal(study=prolific_study.study, status=Study.Status.LIVE)
        if refusal and not refusal.startswith("already"):
            raise ProlificSetupError(f"Not published: our study cannot go live yet: {refusal}.")
    answer = client.study_transition(prolific_study.prolific_id, transition)
    return _mirror(prolific_study, answer)


def prolific_study_sync(*, prolific_study: ProlificStudy, client: ProlificClient | None = None) -> ProlificStudy:
    """Read the study from Prolific; ours takes its status and places."""
    if not prolific_study.created_on_prolific:
        raise ProlificSetupError("Not created on Prolific yet.")
    client = client or prolific_client(prolific_study.study)
    return _mirror(prolific_study, client.study_get(prolific_study.prolific_id))


def _mirror(prolific_study: ProlificStudy, answer: dict) -> ProlificStudy:
    status = answer.get("status", prolific_study.status)
    if status not in ProlificStudy.Status.values:
        # Prolific shows an undocumented PROCESSING for a moment while it changes a study: keep
        # the last status we knew (and ours with it) until the next answer names a known one.
        logger.info(
            "Prolific study %s is %r for now; keeping %r", prolific_study.prolific_id, status, prolific_study.status
        )
        status = prolific_study.status or ProlificStudy.Status.UNPUBLISHED
    with transaction.atomic():
        ProlificStudy.objects.filter(pk=prolific_study.pk).update(
            status=status,
            total_available_places=answer.get("total_available_places", prolific_study.total_available_places),
            synced_at=timezone.now(),
        )
        ours = MIRRORED_STATUS[status]
        Study.objects.filter(pk=prolific_study.study_id).exclude(status=ours).update(status=ours)
    prolific_study.refresh_from_db()
    prolific_study.study.refresh_from_db()
    return prolific_study


# --- places ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlacesGrowth:
    places_needed: int  # places the clips below target still need (topups.places_needed)
    places_free: int  # places on Prolific not yet taken
    before: int
    after: int
    ceiling: int | None

    @property
    def added(self) -> int:
        return self.after - self.before

    def summary(self) -> str:
        head = f"{self.places_needed} place(s) still needed, {self.places_free} free on Prolific"
        if self.added:
            return f"{head}: places {self.before} -> {self.after}."
        if self.ceiling is not None and self.before >= self.ceiling and self.places_needed > self.places_free:
            return f"{head}: at the ceiling of {self.ceiling}, nothing added."
        return f"{head}: nothing to add."


def prolific_places_grow(*, prolific_study: ProlificStudy, client: ProlificClient | None = None) -> PlacesGrowth:
    """Add on Prolific the places the clips still need beyond those free there, up to the ceiling;
    never fewer than now (Prolific only increases). Our study's place limit follows."""
    client = client or prolific_client(prolific_study.study)
    answer = client.study_get(prolific_study.prolific_id)
    _mirror(prolific_study, answer)
    total = answer["total_available_places"]
    free = max(0, total - answer.get("places_taken", 0))
    needed = topup_plan(study=prolific_study.study).total.places_needed
    ceiling = prolific_study.places_ceiling
    wanted = total + max(0, needed - free)
    after = max(total, min(wanted, ceiling) if ceiling is not None else total)
    if after > total:
        answer = client.study_update(prolific_study.prolific_id, {"total_available_places": after})
        _mirror(prolific_study, answer)
        # Our own place limit must let the new Prolific participants in.
        Study.objects.filter(pk=prolific_study.study_id, places__lt=after).update(places=after)
    return PlacesGrowth(needed, free, total, after, ceiling)


def prolific_studies_follow() -> list[tuple[ProlificStudy, str]]:
    """The periodic job: refresh every study running on Prolific and grow those set to. Returns
    (study, what happened) pairs; one study's failure does not stop the others."""
    running = ProlificStudy.objects.exclude(prolific_id="").filter(
        status__in=[ProlificStudy.Status.ACTIVE, ProlificStudy.Status.PAUSED, ProlificStudy.Status.AWAITING_REVIEW]
    )
    outcomes = []
    for prolific_study in running.select_related("study"):
        try:
            prolific_study_sync(prolific_study=prolific_study)
            outcome = f"status {prolific_study.status}"
            # Only while Prolific says ACTIVE: more places would reopen a study the researcher
            # stopped, or one Prolific moved to AWAITING REVIEW.
            if prolific_study.auto_grow and prolific_study.status == ProlificStudy.Status.ACTIVE:
                outcome += "; " + prolific_places_grow(prolific_study=prolific_study).summary()
            outcomes.append((prolific_study, outcome))
        except (ProlificError, ProlificSetupError) as error:
            outcomes.append((prolific_study, str(error)))
    return outcomes


def prolific_follow_periodically(stopped: threading.Event) -> None:
    """Until `stopped` is set: every PROLIFIC_FOLLOW_SECONDS, prolific_studies_follow (a Celery
    worker runs this in a thread, as it does the stale-job sweep; several at once are harmless:
    places are set to a total computed from Prolific's answer, never added to)."""
    while not stopped.wait(settings.PROLIFIC_FOLLOW_SECONDS):
        try:
            if settings.PROLIFIC_API_TOKEN:
                prolific_studies_follow()
        except Exception:  # a database hiccup must not end the following for good
            logger.exception(
                "following the studies on Prolific failed; again in %s s", settings.PROLIFIC_FOLLOW_SECONDS
            )
        finally:
            connections.close_all()


# --- participant groups ------------------------------------------------------------------------------

GROUP_MEMBERS = {
    "annotators": "participants who completed a task",
    "rejected": "participants whose submission was rejected",
}
GROUP_CHUNK = 500  # participant ids per call


def group_participant_ids(*, study: Study, members: str) -> list[str]:
    participants = Participant.objects.filter(study=study).exclude(prolific_pid="")
    if members == "annotators":
        participants = participants.filter(completed_at__isnull=False)
    elif members == "rejected":
        participants = participants.filter(decision=Participant.Decision.REJECTED)
    else:
        raise ValueError(f"members is one of {', '.join(GROUP_MEMBERS)}")
    return list(participants.order_by("pk").values_list("prolific_pid", flat=True))


def prolific_group_add(
    *, study: Study, members: str, group: ProlificParticipantGroup | None = None, name: str = "", workspace_id: str = ""
) -> tuple[ProlificParticipantGroup, int]:
    """Add the study's annotators (or its rejected participants) to a participant group on Prolific,
    made first when `group` is None. Safe to repeat: Prolific ignores members already in."""
    ids = group_participant_ids(study=study, members=members)
    client = prolific_client(study)
    if group is None:
        if not workspace_id:
            raise ProlificSetupError("PROLIFIC_WORKSPACE_ID is not set: Prolific makes a group in a workspace.")
        if not name:
            raise ProlificSetupError("A new participant group needs a name.")
        made = client.participant_group_create(
            name=name, workspace_id=workspace_id, description=f"{GROUP_MEMBERS[members]} of {study.name}"
        )
        group = ProlificParticipantGroup.objects.create(prolific_id=made["id"], name=name, source_study=study)
    for start in range(0, len(ids), GROUP_CHUNK):
        client.participant_group_add(group.prolific_id, ids[start : start + GROUP_CHUNK])
    count = len(client.participant_group_members(group.prolific_id))
    ProlificParticipantGroup.objects.filter(pk=group.pk).update(participant_count=count)
    group.participant_count = count
    return group, len(ids)
