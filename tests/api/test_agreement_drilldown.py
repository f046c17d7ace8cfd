"""The agreement report's drill-down through the API: clips sorted a page at a time, one clip's
marks word by word, Prolific ids only for who may see them, 409 before the report is ready."""

import pytest

from annotation.participant_names import PARTICIPANT_PERMISSION
from tests.api.callers import staff_with, token_client
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db
VIEW = "evaluation.view_agreementreport"


@pytest.fixture
def study():
    return golden_study()


@pytest.fixture
def report_id(study, django_capture_on_commit_callbacks):
    asker = token_client(staff_with("evaluation.add_agreementreport", VIEW))
    with django_capture_on_commit_callbacks(execute=True):
        response = asker.post(
            "/api/v1/agreement-reports/", {"study": study.pk, "parameters": {"resamples": 20}}, format="json"
        )
    return response.json()["id"]


def test_clips_come_lowest_agreement_first_and_sort_by_any_column(report_id):
    api = token_client(staff_with(VIEW))
    page = api.get(f"/api/v1/agreement-reports/{report_id}/clips/").json()

    assert page["count"] == 12 and page["ordering"] == "agreement"  # every usable annotation: the 2 short clips too
    values = [row["agreement"] for row in page["results"]]
    assert values == sorted(values)
    by_alpha = api.get(f"/api/v1/agreement-reports/{report_id}/clips/", {"ordering": "-alpha_ordinal", "limit": 3})
    alphas = [row["alpha_ordinal"] for row in by_alpha.json()["results"]]
    assert len(alphas) == 3 and alphas == sorted(alphas, reverse=True)
    refused = api.get(f"/api/v1/agreement-reports/{report_id}/clips/", {"ordering": "colour"})
    assert refused.status_code == 400 and "cannot sort clips by 'colour'" in refused.json()["ordering"][0]
    result = api.get(f"/api/v1/agreement-reports/{report_id}/").json()["result"]
    assert {"clips", "positions", "words", "pairs"} <= set(result["drilldown"])


def test_a_clip_word_by_word_with_opaque_ids_and_prolific_ids_only_with_the_permission(report_id):
    viewer = token_client(staff_with(VIEW))
    lowest = viewer.get(f"/api/v1/agreement-reports/{report_id}/clips/", {"limit": 1}).json()["results"][0]

    marks = viewer.get(f"/api/v1/agreement-reports/{report_id}/clips/{lowest['clip']}/").json()

    assert marks["agreement"] == lowest and len(marks["annotations"]) == 6
    assert all(len(row["levels"]) == len(marks["words"]) for row in marks["annotations"])
    assert all(row["annotator"].startswith("a-") and "participant" not in row for row in marks["annotations"])
    named = token_client(staff_with(VIEW, PARTICIPANT_PERMISSION))
    rows = named.get(f"/api/v1/agreement-reports/{report_id}/clips/{lowest['clip']}/").json()["annotations"]
    assert all(len(row["participant"]) == 24 for row in rows)  # the golden study's Prolific ids
    assert viewer.get(f"/api/v1/agreement-reports/{report_id}/clips/no-such-clip/").status_code == 404


def test_no_drilldown_before_the_report_is_ready_nor_without_the_permission(study):
    asker = token_client(staff_with("evaluation.add_agreementreport", VIEW))
    queued = asker.post("/api/v1/agreement-reports/", {"study": study.pk}).json()["id"]

    response = asker.get(f"/api/v1/agreement-reports/{queued}/clips/")

    assert response.status_code == 409 and response["Retry-After"]
    assert token_client(staff_with()).get(f"/api/v1/agreement-reports/{queued}/clips/").status_code == 403
