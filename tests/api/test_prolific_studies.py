"""Studies on Prolific through the API, against the contract fake: a POST fills what it leaves out
from the proposal, the actions queue jobs (202, 409 while one runs), the cost, and what may no
longer change once the study is on Prolific."""

import pytest

from annotation.models import Study
from prolific.models import ProlificStudy
from tests.api.callers import staff_with, token_client
from tests.prolific.test_studies import english_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return token_client(staff_with("prolific.view_prolificstudy", "prolific.add_prolificstudy",
                                   "prolific.change_prolificstudy"))  # fmt: skip


def test_a_study_is_created_published_grown_and_stopped_through_the_api(
    api,
    prolific_fake,
    django_capture_on_commit_callbacks,
):
    study = english_study()
    made = api.post("/api/v1/prolific-studies/", {"study": study.pk, "places_ceiling": 10}, format="json")
    assert made.status_code == 201, made.json()
    body = made.json()
    assert (body["estimated_minutes"], body["reward_cents"], body["places"], body["language"]) == (4, 100, 6, "English")
    assert (body["approval_rate_min"], body["approvals_min"], body["status"]) == (99, 25, "")
    url = f"/api/v1/prolific-studies/{body['id']}/"

    cost = api.get(url + "cost/").json()
    assert cost["preview"] == {
        "rewards": 600,
        "screen_outs": 500,
        "bonuses": 0,
        "fee_rate": 0.333,
        "fee": 367,
        "total": 1467,
    }
    assert cost["preview_at_ceiling"]["total"] == 2000 and cost["so_far"]["total"] == 0

    for action, expected in [("create", "UNPUBLISHED"), ("publish", "ACTIVE")]:
        with django_capture_on_commit_callbacks(execute=True):
            queued = api.post(url + "actions/", {"action": action}, format="json")
        assert queued.status_code == 202
        job = api.get(f"/api/v1/prolific-study-jobs/{queued.json()['id']}/").json()
        assert job["status"] == "succeeded", job
        assert api.get(url).json()["status"] == expected
    prolific_study = ProlificStudy.objects.get()
    prolific_fake.state["studies"][prolific_study.prolific_id]["places_taken"] = 6

    with django_capture_on_commit_callbacks(execute=True):
        api.post(url + "actions/", {"action": "grow"}, format="json")
    assert api.get(url).json()["total_available_places"] == 10
    refused = api.patch(url, {"reward_cents": 50}, format="json")
    assert refused.status_code == 400 and "reward_cents" in str(refused.json()), refused.json()
    assert api.patch(url, {"auto_grow": True}, format="json").json()["auto_grow"] is True

    with django_capture_on_commit_callbacks(execute=True):
        api.post(url + "actions/", {"action": "stop"}, format="json")
    assert Study.objects.get(pk=study.pk).status == Study.Status.CLOSED


def test_a_second_action_while_one_is_queued_is_409(api, prolific_fake):
    study = english_study()
    url = f"/api/v1/prolific-studies/{api.post('/api/v1/prolific-studies/', {'study': study.pk}).json()['id']}/"
    first = api.post(url + "actions/", {"action": "create"}, format="json")  # no commit: stays queued
    second = api.post(url + "actions/", {"action": "publish"}, format="json")
    assert (first.status_code, second.status_code) == (202, 409)
    assert second.json()["id"] == first.json()["id"]
    assert api.post(url + "actions/", {"action": "group"}, format="json").status_code == 400  # who?
