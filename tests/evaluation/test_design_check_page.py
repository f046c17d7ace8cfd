"""The study designer page's design check: whether model allocation and the ordinal predictor beat
the fixed design for the study, shown from the study's stored check, run by a POST (issue 31)."""

import pytest
from django.urls import reverse

from evaluation.services.design_checks import study_design_check
from tests.annotation.design_checks import seed_design_check
from tests.annotation.factories import StudyFactory
from tests.api.callers import staff_with, token_client
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db
VIEW = "evaluation.view_agreementreport"


def verdicts(page: str) -> tuple[str, str]:
    start = page.index('id="design-verdicts"')
    section = page[start : page.index("</div>", start)]
    return section[section.index('id="verdict-allocate"') :], section[section.index('id="verdict-ordinal"') :]


def test_without_a_check_neither_design_is_offered_and_the_page_says_to_check_a_pilot(client):
    study = StudyFactory()
    client.force_login(staff_with(VIEW))
    page = client.get(reverse("admin:evaluation_agreementreport_design", args=[study.pk])).content.decode()
    allocate, ordinal = verdicts(page)
    assert "Model allocation: not offered</strong>: no design check yet" in allocate
    assert "The ordinal predictor: not offered" in ordinal


def test_only_a_design_that_beats_the_fixed_design_is_recommended(client):
    study = StudyFactory()
    client.force_login(staff_with(VIEW))
    url = reverse("admin:evaluation_agreementreport_design", args=[study.pk])
    seed_design_check(study, beats=False)
    allocate, _ = verdicts(client.get(url).content.decode())
    assert "Model allocation: not recommended (loses)</strong>: Simulated: it is worse" in allocate
    seed_design_check(study, beats=True)
    page = client.get(url).content.decode()
    allocate, _ = verdicts(page)
    assert "Model allocation: recommended</strong>: Simulated: it beats the fixed design" in allocate
    assert "Checked 2026-12-05T12:00:00 UTC from 400 annotations, at 10 a clip" in page
    assert "by a held-out listener: its labels are better than the majority's (agreement difference 0.0120" in page


def test_running_the_check_needs_change_study_and_a_pilot(client):
    study = StudyFactory()
    url = reverse("admin:evaluation_agreementreport_design", args=[study.pk])
    client.force_login(staff_with(VIEW))
    assert client.post(url).status_code == 403
    client.force_login(staff_with(VIEW, "annotation.change_study"))
    answer = client.post(url, follow=True)
    page = answer.content.decode()
    assert "Not checked: " in page, page[page.find("messagelist") : page.find("messagelist") + 400]
    study.refresh_from_db()
    assert study.design_check == {}


def test_the_service_stores_the_check_at_the_study_settings_and_the_api_answers_it():
    study = golden_study()
    check = study_design_check(
        study=study, fit_check={"can_tell": True, "reason": "fits"}, resamples=2, simulated_clips=20
    )
    study.refresh_from_db()
    assert study.design_check == check
    assert check["settings"]["target_annotations"] == study.target_annotations and check["resamples"] == 2
    assert {check["allocate"]["design"], check["ordinal"]["design"]} == {"allocate", "ordinal"}
    assert check["allocate"]["beats_fixed"] == (check["allocate"]["verdict"] == "beats")
    # The model fitted to the pilot itself, scored by a held-out listener against the majority.
    assert check["model_standing"]["verdict"] in {"better", "no better", "worse"}
    assert check["model_standing"]["held_out"] > 0 and "held out" in check["model_standing"]["method"]

    viewer = token_client(staff_with(VIEW))
    body = {"study": study.pk, "source": "pilot", "replicates": 2, "check_allocation": True}
    assert viewer.post("/api/v1/study-designs/", body, format="json").status_code == 403
    assert viewer.post("/api/v1/study-designs/", {**body, "source": "assumptions"}, format="json").json() == {
        "check_allocation": ['The design check runs from a pilot: source "pilot".']
    }
    answer = viewer.post("/api/v1/study-designs/", {**body, "check_allocation": False}, format="json")
    assert answer.status_code == 200 and answer.json()["design_check"]["allocate"] == check["allocate"]


def test_a_fit_the_designer_checked_against_nothing_lets_no_design_beat_the_fixed_one():
    study = golden_study()
    unchecked = {"can_tell": True, "checked": [], "reason": "not checked: no pilot with three or more listeners a clip"}
    check = study_design_check(study=study, fit_check=unchecked, resamples=2, simulated_clips=20)
    assert check["allocate"]["verdict"] == check["ordinal"]["verdict"] == "cannot tell"
    assert check["fit_check"] == unchecked["reason"]


def test_the_api_stores_the_same_check_whatever_seed_and_overrides_a_request_gives():
    """The stored verdict unlocks a design: asking again with another seed must not re-roll it."""
    study = golden_study()
    api = token_client(staff_with(VIEW, "annotation.change_study"))
    body = {"study": study.pk, "source": "pilot", "replicates": 2, "check_allocation": True}
    first = api.post("/api/v1/study-designs/", {**body, "seed": 1}, format="json")
    second = api.post("/api/v1/study-designs/", {**body, "seed": 2, "targets": {"flip_share": 0.5}}, format="json")
    assert first.status_code == second.status_code == 200, second.json()
    stored = [answer.json()["design_check"] for answer in (first, second)]
    for check in stored:
        check.pop("checked_at")
    assert stored[0] == stored[1]
