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
    assert page.count('class="design') == 39  # 3 to 15 annotators, fixed, exact and probabilistic
    assert "at 12.0 an hour" in page
    assert "labels differing from fixed" in page and "<td>probabilistic</td>" in page
    assert "Probabilistic stopping at epsilon 0.02, at least 3 annotations a clip" in page

    pilot = client.get(
        url,
        {
            "source": "pilot",
            "hourly_rate": 15,
            "kappa_width": 0.5,
            "flip_share": 0.05,
            "epsilon": 0.1,
            "minimum": 2,
            "replicates": 3,
        },
    ).content.decode()
    assert "pilot of golden" in pilot and 'id="recommendation"' in pilot
    assert "Probabilistic stopping at epsilon 0.1, at least 2 annotations a clip" in pilot


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
    fields = {"source": "assumptions", "hourly_rate": 15, "kappa_width": 0.1, "flip_share": 0.02, "replicates": 3}
    for name, value, message in (
        ("epsilon", 0.9, "less than or equal to 0.5"),
        ("epsilon", 0, "greater than or equal to 0.0001"),
        ("minimum", 0, "greater than or equal to 1"),
    ):
        refused = client.get(url, {**fields, "epsilon": 0.02, "minimum": 3, name: value}).context["form"]
        assert list(refused.errors) == [name] and message in refused.errors[name][0]


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
    assert len(design["rows"]) == 39 and design["assumptions"]["hourly_rate"] == 20
    assert design["recommendation"]["mode"] in ("fixed", "exact", "probabilistic")
    assert design["assumptions"]["source"].startswith("pilot of golden")
    assert design["probabilistic"] == {"epsilon": 0.02, "minimum": 3}
    assert {row["mode"] for row in design["rows"]} == {"fixed", "exact", "probabilistic"}
    assert all(row["differing_share"] == 0 for row in design["rows"] if row["mode"] != "probabilistic")
    assert all("differing_share_se" in row for row in design["rows"])
    # From a pilot: its resamples and its check (issue 31): every design's flip band and whether it can tell.
    assert design["resamples"] >= 2 and isinstance(design["check"]["can_tell"], bool) and design["check"]["reason"]
    assert all(row["flip_share_low"] <= row["flip_share"] <= row["flip_share_high"] for row in design["rows"])
    assert all(isinstance(row["can_tell"], bool) for row in design["rows"])
    assert isinstance(design["recommendation"]["can_tell"], bool)

    chosen = api.post(
        "/api/v1/study-designs/", {**body, "probabilistic": {"epsilon": 0.1, "minimum": 2}}, format="json"
    )
    assert chosen.status_code == 200 and chosen.json()["probabilistic"] == {"epsilon": 0.1, "minimum": 2}
    for bad in ({"epsilon": 0.9}, {"epsilon": 0}, {"minimum": 0}):
        refused = api.post("/api/v1/study-designs/", {**body, "probabilistic": bad}, format="json")
        assert refused.status_code == 400 and list(refused.json()["probabilistic"]) == list(bad)

    form = StudyFactory(slug="form", kind="form")
    refused = api.post("/api/v1/study-designs/", {"study": form.pk, "replicates": 3}, format="json")
    assert refused.status_code == 400 and "listening form" in refused.content.decode()
    assert token_client(staff_with()).post("/api/v1/study-designs/", body, format="json").status_code == 403


def test_the_command_prints_the_table_and_the_recommendation(study):
    out = io.StringIO()
    call_command("design_study", study.slug, "--spammers", "0.1", "--replicates", "3", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 + 39 + 1 and lines[-1].startswith("recommended: ")
    assert lines[0] == "probabilistic stopping: epsilon 0.02, at least 3 annotations a clip"
    assert lines[1].split()[:2] == ["N", "mode"] and "differing" in lines[1]
    probabilistic = [line for line in lines[2:-1] if line.split()[1] == "probabilistic"]
    assert len(probabilistic) == 13 and all(line.count("±") == 4 for line in lines[2:-1])
    out = io.StringIO()
    call_command("design_study", study.slug, "--epsilon", "0.1", "--minimum", "2", "--replicates", "3", stdout=out)
    assert out.getvalue().startswith("probabilistic stopping: epsilon 0.1, at least 2 annotations a clip")
    with pytest.raises(CommandError, match=r"epsilon must be between 0\.0001 and 0\.5"):
        call_command("design_study", study.slug, "--epsilon", "0.9", "--replicates", "3")
    with pytest.raises(CommandError, match="minimum must be a whole number of annotations, at least 1"):
        call_command("design_study", study.slug, "--minimum", "0", "--replicates", "3")
    out = io.StringIO()
    call_command("design_study", study.slug, "--source", "pilot", "--replicates", "3", "--json", stdout=out)
    assert json.loads(out.getvalue())["recommendation"]["annotators"] in range(3, 16)
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        call_command("design_study", "nope")
