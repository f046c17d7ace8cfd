"""The contract fake itself (tests/prolific_fake): every rule cites the documentation page it comes
from, every endpoint names its page, every call our client makes is one the fake serves, and the
rules every endpoint shares hold over plain HTTP (405 with Allow for a wrong method, 400 for a query
parameter or a field the page does not document), as do the ones main's fake had wrong: amounts in
cents, 202 for the pay call, SCREENED OUT spelt with a space."""

import inspect
import re
from pathlib import Path

import httpx
import pytest

from prolific.client import ProlificClient, ProlificError
from tests.prolific_fake import rules
from tests.prolific_fake.server import _ENDPOINTS, TOKEN, ProlificFake
from tests.prolific_fake.submissions import submission_add

pytestmark = pytest.mark.django_db
RULES_SOURCE = Path(rules.__file__).read_text()
DOCUMENTED = re.compile(r"https://(docs\.prolific\.com|researcher-help\.prolific\.com?|www\.rfc-editor\.org)/")


def test_every_rule_quotes_its_documentation_and_names_the_page_in_a_comment():
    assert len(rules.ALL) == len(set(rules.ALL)) >= 30
    for rule in rules.ALL:
        assert rule.quote.strip() and DOCUMENTED.search(rule.source), rule.name
    for name in re.findall(r"^([A-Z_]+) = Rule\(", RULES_SOURCE, re.M):
        above = RULES_SOURCE.split(f"\n{name} = Rule(")[0].rstrip().splitlines()[-1]
        assert above.startswith("# Documented at: ") and ("https://" in above or "RFC 9110" in above), name
    assert set(re.findall(r"^([A-Z_]+) = Rule\(", RULES_SOURCE, re.M)) == {
        name for name, value in vars(rules).items() if isinstance(value, rules.Rule)
    }
    assert {id(rule) for rule in rules.ALL} == {id(v) for v in vars(rules).values() if isinstance(v, rules.Rule)}


def test_every_endpoint_names_the_page_it_is_built_from():
    ProlificFake()  # loads every module's routes
    assert len(_ENDPOINTS) >= 20
    for endpoint in _ENDPOINTS:
        assert DOCUMENTED.search(endpoint.page), (endpoint.method, endpoint.pattern.pattern)


# Each of the client's calls, with arguments the fake accepts: a call added to the client without a
# line here fails the test below, so the fake keeps up with the client.
def _calls(fake) -> dict:
    study = fake.state["studies"]
    draft = {
        "name": "n",
        "description": "d",
        "external_study_url": "https://example.org/s/?PROLIFIC_PID={{%PROLIFIC_PID%}}",
        "prolific_id_option": "url_parameters",
        "completion_codes": [{"code": "C1", "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}],
        "total_available_places": 2,
        "estimated_completion_time": 5,
        "reward": 100,
    }
    message = "m" * 100
    return {
        "study_create": lambda c: c.study_create(draft),
        "studies_list": lambda c: c.studies_list(state="UNPUBLISHED"),
        "study_get": lambda c: c.study_get(next(iter(study))),
        "study_update": lambda c: c.study_update(next(iter(study)), {"internal_name": "x"}),
        "study_transition": lambda c: c.study_transition(next(iter(study)), "PUBLISH"),
        "filters_list": lambda c: c.filters_list(),
        "participant_group_create": lambda c: c.participant_group_create(name="g", workspace_id="w"),
        "participant_group_add": lambda c: c.participant_group_add(next(iter(fake.state["groups"])), ["p9"]),
        "participant_group_members": lambda c: c.participant_group_members(next(iter(fake.state["groups"]))),
        "submissions_list": lambda c: c.submissions_list(study_id="st"),
        "approve": lambda c: c.approve("s1"),
        "reject": lambda c: c.reject("s2", message=message, category="OTHER"),
        "request_return": lambda c: c.request_return("s3", reasons=["Withdrew consent"]),
        "bulk_approve": lambda c: c.bulk_approve(study_id="st", participant_ids=["p4"]),
        "bonus_payments_create": lambda c: c.bonus_payments_create(study_id="st", csv_bonuses="p1,1.00"),
        "bonus_payments_pay": lambda c: c.bonus_payments_pay(bulk_id=next(iter(fake.state["bonus_batches"]))),
        "hook_secret_create": lambda c: c.hook_secret_create(workspace_id="w"),
        "hook_subscription_create": lambda c: c.hook_subscription_create(
            workspace_id="w", event_type="submission.status.change", target_url="https://example.org/hook"
        ),
        "hook_subscription_confirm": lambda c: c.hook_subscription_confirm(
            subscription_id=next(iter(fake.state["hooks"]["subscriptions"])),
            secret=next(iter(fake.state["hooks"]["subscriptions"].values()))["hook_secret"],
        ),
    }


def test_every_call_of_the_client_is_one_the_fake_serves(prolific_fake):
    for n in range(1, 5):
        submission_add(
            prolific_fake, study_id="st", participant_id=f"p{n}", submission_id=f"s{n}", status="AWAITING REVIEW"
        )
    calls = _calls(prolific_fake)
    transport = {"from_settings", "for_study", "get", "post", "request"}
    public = {name for name, _ in inspect.getmembers(ProlificClient, inspect.isfunction) if not name.startswith("_")}
    assert public - transport == set(calls), "a call of the client the fake is not asked here"
    client = ProlificClient.from_settings()
    for name, call in calls.items():
        try:
            call(client)
        except ProlificError as error:
            pytest.fail(f"{name}: the fake refused our client: {error}")
    served = {(call["method"], call["path"]) for call in prolific_fake.calls}
    assert len(served) == len(calls)


@pytest.fixture
def http(prolific_fake):
    with httpx.Client(base_url=prolific_fake.url, headers={"Authorization": f"Token {TOKEN}"}, timeout=10) as client:
        yield client


def test_a_wrong_method_is_405_with_the_allowed_ones(http):
    answer = http.put("studies/")
    assert answer.status_code == 405 and answer.headers["Allow"] == "GET, POST"
    assert answer.json()["error"]["title"] == rules.WRONG_METHOD.name
    assert http.get("bulk-bonus-payments/x/pay/").status_code == 405
    assert http.get("no/such/thing/").status_code == 404


def test_a_query_parameter_the_page_does_not_document_is_refused(http):
    answer = http.get("studies/", params={"status": "ACTIVE"})  # the page says `state`
    assert answer.status_code == 400 and "status" in answer.json()["error"]["detail"]
    assert http.get("studies/", params={"state": "SLEEPING"}).status_code == 400
    assert http.get("studies/", params={"state": "(ACTIVE|PAUSED)"}).status_code == 200
    assert http.get("studies/x/submissions/", params={"page_size": "5"}).status_code == 400
    assert http.get("studies/x/submissions/", params={"ordering": "-reward"}).status_code == 400


def test_a_field_the_page_does_not_document_is_refused(http):
    answer = http.post("submissions/bonus-payments/", json={"study_id": "st", "csv_bonuses": "p,1", "currency": "GBP"})
    assert answer.status_code == 400 and answer.json()["error"]["title"] == rules.UNKNOWN_FIELDS.name
    assert http.post("submissions/bonus-payments/", json=["st"]).status_code == 400  # not an object


def test_money_is_answered_in_cents_and_paid_later(http, prolific_fake):
    submission_add(prolific_fake, study_id="st", participant_id="p1", submission_id="s1", status="APPROVED")
    prolific_fake.state["pay_settle_seconds"] = 3600
    setup = http.post("submissions/bonus-payments/", json={"study_id": "st", "csv_bonuses": "p1,8.50"})
    assert setup.status_code == 201
    assert {key: setup.json()[key] for key in ("amount", "fees", "total_amount")} == {
        "amount": 850.0,
        "fees": 283.34,
        "total_amount": 1133.34,
    }  # the documentation's own example, in cents
    paid = http.post(f"bulk-bonus-payments/{setup.json()['id']}/pay/")
    assert paid.status_code == 202
    [submission] = http.get("studies/st/submissions/").json()["results"]
    assert submission["bonus_payments"] == []  # accepted, not paid yet


def test_the_fake_spells_submission_statuses_as_prolific_does(prolific_fake):
    assert "SCREENED OUT" in rules.SUBMISSION_STATUS_NAMES and "SCREENED-OUT" not in rules.SUBMISSION_STATUS_NAMES
    submission_add(prolific_fake, study_id="st", participant_id="p1", submission_id="s1", status="SCREENED OUT")
    with pytest.raises(ValueError, match="not one of Prolific's submission statuses"):
        submission_add(prolific_fake, study_id="st", participant_id="p2", status="SCREENED-OUT")
