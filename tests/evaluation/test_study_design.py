"""The study designer for a study: its admin page (linked from the study's page), the API and the
`design_study` command, from assumptions and from the study's own annotations as a pilot."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from tests.annotation.factories import StudyFactory
from tests.api.callers import staff_with, token_client
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db
VIEW = "evaluation.view_agreementreport"


@pytest.fixture
def study():
    return golden_study()


def test_the_page_plans_from_assumptions_and_from_the_pilot(client, study):
    client.force_login(staff_with(VIEW, "annotation.view_study"))
    study_page = client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    url = reverse("admin:evaluation_agreementreport_design", args=[study.pk])
    assert url in study_page

    empty = client.get(url)
    assert empty.status_code == 200 and 'id="recommendation"' not in empty.content.decode()

    answer = client.get(
        url,
        {
            "source": "assumptions",
            "spammers": 0.1,
            "hourly_rate": 12,
            "kappa_width": 0.5,
            "flip_share": 0.05,
            "replicates": 3,
        },
    )
    page = answer.content.decode()
    assert answer.status_code == 200 and 'id="recommendation"' in page
    assert page.count('class="design') == 26  # 3 to 15 annotators, fixed and exact
    assert "at 12.0 an hour" in page

    pilot = client.get(
        url, {"source": "pilot", "hourly_rate": 15, "kappa_width": 0.5, "flip_share": 0.05, "replicates": 3}
    ).content.decode()
    assert "pilot of golden" in pilot and 'id="recommendation"' in pilot


def test_the_page_needs_the_report_permission_and_says_what_is_wrong(client, study):
    client.force_login(staff_with("annotation.view_study"))
    url = reverse("admin:evaluation_agreementreport_design", args=[study.pk])
    assert client.get(url).status_code == 403
    client.force_login(staff_with(VIEW))
    bad = client.get(
        url,
        {
            "source": "assumptions",
            "accuracy": 0.3,
            "hourly_rate": 15,
            "kappa_width": 0.1,
            "flip_share": 0.02,
            "replicates": 3,
        },
    )
    assert "Ensure this value is greater than or equal to 0.5" in bad.content.decode()


def test_the_api_answers_the_design(study):
    api = token_client(staff_with(VIEW))
    body = {
        "study": study.pk,
        "source": "pilot",
        "assumptions": {"hourly_rate": 20},
        "replicates": 3,
        "targets": {"kappa_width": 0.5, "flip_share": 0.05},
    }
    answer = api.post("/api/v1/study-designs/", body, format="json")
    assert answer.status_code == 200, answer.content
    design = answer.json()
    assert len(design["rows"]) == 26 and design["assumptions"]["hourly_rate"] == 20
    assert design["recommendation"]["mode"] in ("fixed", "exact")
    assert design["assumptions"]["source"].startswith("pilot of golden")

    form = StudyFactory(slug="form", kind="form")
    refused = api.post("/api/v1/study-designs/", {"study": form.pk, "replicates": 3}, format="json")
    assert refused.status_code == 400 and "listening form" in refused.content.decode()
    assert token_client(staff_with()).post("/api/v1/study-designs/", body, format="json").status_code == 403


def test_the_command_prints_the_table_and_the_recommendation(study):
    out = io.StringIO()
    call_command("design_study", study.slug, "--spammers", "0.1", "--replicates", "3", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 + 26 + 1 and lines[-1].startswith("recommended: ")
    out = io.StringIO()
    call_command("design_study", study.slug, "--source", "pilot", "--replicates", "3", "--json", stdout=out)
    assert json.loads(out.getvalue())["recommendation"]["annotators"] in range(3, 16)
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        call_command("design_study", "nope")
