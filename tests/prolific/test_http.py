"""The Prolific client's transport against the contract fake (tests/prolific_fake): retries on 429
and 5xx with Retry-After honoured, no retry of a call that may have been carried out, every call
recorded without its token, and the fake's rules refusing what a wrong client sends."""

import json
import time

import pytest

from prolific.client import ProlificClient, ProlificError
from prolific.client.retries import retry_after_seconds
from prolific.models import ProlificCall
from tests.annotation.factories import StudyFactory
from tests.prolific_fake import rules

pytestmark = pytest.mark.django_db

DRAFT = {
    "name": "Which words are stressed?",
    "description": "Listen to short clips and mark the words the speaker stresses.",
    "external_study_url": "https://example.org/s/x/?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
    "&SESSION_ID={{%SESSION_ID%}}",
    "prolific_id_option": "url_parameters",
    "completion_codes": [{"code": "DONE1234", "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}],
    "total_available_places": 10,
    "estimated_completion_time": 20,
    "reward": 500,
    "device_compatibility": ["desktop"],
    "peripheral_requirements": ["audio"],
    "filters": [{"filter_id": "approval_rate", "selected_range": {"lower": 99, "upper": 100}}],
}


@pytest.fixture
def api(prolific_fake):
    return ProlificClient.from_settings()


def test_a_429_is_retried_after_the_wait_prolific_asks_for(prolific_fake, api, settings):
    settings.PROLIFIC_RETRY_MAX_WAIT_SECONDS = 5
    api = ProlificClient.from_settings()
    prolific_fake.fail("GET", "filters/", 429, headers={"Retry-After": "1"})

    started = time.monotonic()
    assert api.filters_list()
    assert time.monotonic() - started >= 1.0  # waited as Retry-After said, not the 10 ms backoff
    assert [call.status for call in ProlificCall.objects.order_by("pk")] == [429, 200]
    assert [call.attempt for call in ProlificCall.objects.order_by("pk")] == [1, 2]


def test_a_client_without_retries_fails_where_this_one_gets_through(prolific_fake, api):
    """The client before this change tried once: Prolific's rate limit made it fail."""
    one_shot = ProlificClient(token=prolific_fake.token, base_url=prolific_fake.url, attempts=1)
    prolific_fake.fail("POST", "studies/", 429, headers={"Retry-After": "0"})
    with pytest.raises(ProlificError, match="429"):
        one_shot.study_create(DRAFT)

    prolific_fake.fail("POST", "studies/", 429, headers={"Retry-After": "0"})
    assert api.study_create(DRAFT)["status"] == "UNPUBLISHED"


def test_a_5xx_is_retried_for_a_safe_call_only(prolific_fake, api):
    prolific_fake.fail("GET", "filters/", 503, times=2)
    assert api.filters_list()
    assert len(prolific_fake.calls_to("GET", "filters/")) == 3

    prolific_fake.fail("POST", "studies/", 502)
    with pytest.raises(ProlificError, match="502"):
        api.study_create(DRAFT)
    assert len(prolific_fake.calls_to("POST", "studies/")) == 1  # a second draft could have been made


def test_an_answer_lost_after_prolific_acted_is_not_repeated_for_a_create(prolific_fake, api):
    prolific_fake.fail("POST", "studies/", 504, after_handling=True)
    with pytest.raises(ProlificError, match="504"):
        api.study_create(DRAFT)
    assert len(prolific_fake.state["studies"]) == 1  # made once; ours must look before trying again


def test_giving_up_reports_the_last_answer(prolific_fake, api):
    prolific_fake.fail("GET", "filters/", 500, times=10, body={"error": {"detail": "Try later."}})
    with pytest.raises(ProlificError, match=r"Prolific answered 500: Try later\."):
        api.filters_list()
    assert len(prolific_fake.calls_to("GET", "filters/")) == 4  # PROLIFIC_RETRY_ATTEMPTS


def test_every_call_is_recorded_under_its_study_without_the_token(prolific_fake, api):
    study = StudyFactory()
    created = api.for_study(study).study_create(DRAFT)
    with pytest.raises(ProlificError):
        api.for_study(study).study_update(created["id"], {"total_available_places": 0})

    made, refused = ProlificCall.objects.filter(study=study).order_by("pk")
    assert (made.method, made.path, made.status, made.request_body) == ("POST", "studies/", 201, DRAFT)
    assert made.response_body["id"] == created["id"] and made.duration_ms >= 0
    assert (refused.method, refused.status) == ("PATCH", 400)
    stored = json.dumps([list(row.values()) for row in ProlificCall.objects.values()], default=str)
    assert prolific_fake.token not in stored


def test_secret_fields_are_masked_in_the_record(prolific_fake, api):
    with pytest.raises(ProlificError):
        api.post(
            "hooks/secrets/", {"workspace_id": "w", "secret": "s3cr3t", "nested": {"api_token": "t"}}, idempotent=True
        )
    call = ProlificCall.objects.get()
    assert call.request_body == {"workspace_id": "w", "secret": "********", "nested": {"api_token": "********"}}


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after_seconds("7") == 7
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0  # in the past
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


# --- the fake's rules, as a wrong client meets them --------------------------------------------


def test_the_fake_wants_the_token_header(prolific_fake):
    with pytest.raises(ProlificError, match="401"):
        ProlificClient(token="wrong", base_url=prolific_fake.url).filters_list()
    assert rules.AUTH_HEADER.quote.startswith("The Prolific API uses API token")


def test_the_retired_study_model_is_refused(prolific_fake, api):
    retired = {k: v for k, v in DRAFT.items() if k not in ("completion_codes", "filters")}
    retired |= {"completion_code": "DONE1234", "completion_option": "url", "eligibility_requirements": []}
    with pytest.raises(ProlificError) as refused:
        api.study_create(retired)
    assert refused.value.status == 400
    for name in ("completion_code", "completion_option", "eligibility_requirements"):
        assert name in refused.value.message
    assert prolific_fake.state["studies"] == {}


@pytest.mark.parametrize(
    "change, words",
    [
        ({"reward": 0}, "reward"),
        ({"reward": 5.5}, "reward"),
        ({"external_study_url": "https://x.org/?p={{%PARTICIPANT%}}"}, "Unknown placeholder"),
        ({"device_compatibility": ["phone"]}, "device_compatibility"),
        ({"completion_codes": []}, "completion_codes"),
        (
            {
                "completion_codes": [
                    {"code": "A", "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]},
                    {"code": "A", "code_type": "OTHER", "actions": []},
                ]
            },
            "unique",
        ),
        (
            {
                "completion_codes": [
                    {
                        "code": "A",
                        "code_type": "COMPLETED",
                        "actions": [{"action": "AUTOMATICALLY_APPROVE"}, {"action": "MANUALLY_REVIEW"}],
                    }
                ]
            },
            "can't be used together",
        ),
        (
            {
                "completion_codes": [
                    {"code": "S", "code_type": "FIXED_SCREENOUT", "actions": [{"action": "FIXED_SCREEN_OUT_PAYMENT"}]}
                ]
            },
            "fixed_screen_out_reward, slots required",
        ),
        ({"filters": [{"filter_id": "first-language", "selected_values": ["English"]}]}, "Not among its choices"),
        ({"filters": [{"filter_id": "approval_rate", "selected_values": ["99"]}]}, "needs selected_range"),
        ({"filters": [{"filter_id": "no-such-screener", "selected_values": ["1"]}]}, "Unknown filter"),
    ],
)
def test_a_draft_breaking_a_rule_is_refused(prolific_fake, api, change, words):
    with pytest.raises(ProlificError, match="400") as refused:
        api.study_create(DRAFT | change)
    assert words in refused.value.message


def test_places_only_increase_and_other_fields_freeze_once_published(prolific_fake, api):
    study_id = api.study_create(DRAFT)["id"]
    assert api.study_update(study_id, {"total_available_places": 5})["total_available_places"] == 5  # a draft may
    api.study_transition(study_id, "PUBLISH")

    with pytest.raises(ProlificError, match="can only be increased"):
        api.study_update(study_id, {"total_available_places": 4})
    with pytest.raises(ProlificError, match="Cannot change reward"):
        api.study_update(study_id, {"reward": 900})
    assert api.study_update(study_id, {"total_available_places": 8})["total_available_places"] == 8


def test_transitions_follow_the_status_names(prolific_fake, api):
    study_id = api.study_create(DRAFT)["id"]
    with pytest.raises(ProlificError, match="Cannot PAUSE a study in status UNPUBLISHED"):
        api.study_transition(study_id, "PAUSE")
    assert [api.study_transition(study_id, action)["status"] for action in ("PUBLISH", "PAUSE", "START", "STOP")] == [
        "ACTIVE",
        "PAUSED",
        "ACTIVE",
        "AWAITING REVIEW",
    ]
    assert {status for _, status in rules.ALLOWED_TRANSITIONS.values()} <= set(rules.STUDY_STATUSES)


def test_participant_groups_ignore_members_already_in(prolific_fake, api):
    with pytest.raises(ProlificError, match="workspace or organisation"):
        api.post("participant-groups/", {"name": "wave 1"}, idempotent=False)
    group = api.participant_group_create(name="wave 1", workspace_id="w")
    api.participant_group_add(group["id"], ["p1", "p2"])
    api.participant_group_add(group["id"], ["p2", "p3"])
    assert [m["participant_id"] for m in api.participant_group_members(group["id"])] == ["p1", "p2", "p3"]


def test_every_rule_names_its_source_and_quote():
    for rule in rules.ALL:
        assert rule.source and rule.quote, rule.name
