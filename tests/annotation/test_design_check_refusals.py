"""Model allocation and the ordinal predictor are chosen only where the study's design check says
they beat the fixed design: the admin's change form and the API's study write refuse them
otherwise, naming the field and saying why (issue 31)."""

import pytest
from django.urls import reverse

from annotation.models import Study
from tests.annotation.admin_forms import change_page_data
from tests.annotation.design_checks import seed_design_check
from tests.annotation.factories import StudyFactory
from tests.api.callers import staff_with, token_client

pytestmark = pytest.mark.django_db
NO_CHECK = "run the study designer on a pilot of this study"


@pytest.fixture
def study():
    return StudyFactory(target_annotations=10, adaptive_min_annotators=5, adaptive_max_per_clip=20)


def post_change(admin_client, study, **fields):
    url = reverse("admin:annotation_study_change", args=[study.pk])
    return admin_client.post(url, {**change_page_data(admin_client.get(url)), **fields})


def test_the_admin_refuses_model_allocation_without_a_check_and_says_to_run_the_designer(admin_client, study):
    answer = post_change(admin_client, study, adaptive_mode="allocate")
    assert answer.status_code == 200
    errors = answer.context["adminform"].form.errors
    assert NO_CHECK in errors["adaptive_mode"][0] and errors["adaptive_mode"][0].startswith("Model allocation")
    study.refresh_from_db()
    assert study.adaptive_mode == Study.Adaptive.FIXED


def test_the_admin_refuses_a_design_the_check_finds_worse_with_its_reason(admin_client, study):
    seed_design_check(study, beats=False)
    answer = post_change(admin_client, study, adaptive_mode="probabilistic", adaptive_predictor="ordinal")
    errors = answer.context["adminform"].form.errors
    assert list(errors) == ["adaptive_predictor"]
    assert "does not beat the fixed design for this study: Simulated: it is worse" in errors["adaptive_predictor"][0]


def test_the_admin_refuses_a_check_made_at_other_settings(admin_client, study):
    seed_design_check(study, target_annotations=8)
    errors = post_change(admin_client, study, adaptive_mode="allocate").context["adminform"].form.errors
    assert "simulated other settings (target_annotations)" in errors["adaptive_mode"][0]


def test_the_admin_accepts_what_the_check_says_beats_the_fixed_design_and_shows_the_check(admin_client, study):
    seed_design_check(study)
    assert post_change(admin_client, study, adaptive_mode="allocate").status_code == 302
    study.refresh_from_db()
    assert study.adaptive_mode == Study.Adaptive.ALLOCATE
    page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    assert "Checked 2026-12-05T12:00:00 UTC from 400 annotations" in page


def test_a_study_already_allocating_keeps_its_design_when_other_settings_change(admin_client, study):
    Study.objects.filter(pk=study.pk).update(adaptive_mode=Study.Adaptive.ALLOCATE)
    assert post_change(admin_client, study, adaptive_mode="allocate", clips_per_task=7).status_code == 302
    study.refresh_from_db()
    assert study.clips_per_task == 7


def test_the_api_refuses_the_ordinal_predictor_without_a_check_with_the_refusal_body(study):
    api = token_client(staff_with("annotation.change_study", "annotation.view_study"))
    reply = api.patch(
        f"/api/v1/studies/{study.pk}/",
        {"adaptive_mode": "probabilistic", "adaptive_predictor": "ordinal"},
        format="json",
    )
    assert reply.status_code == 400
    body = reply.json()
    assert body["detail"].startswith("The ordinal predictor is offered only where it beats the fixed design")
    assert [(problem["field"], NO_CHECK in problem["reason"]) for problem in body["problems"]] == [
        ("adaptive_predictor", True)
    ]
    study.refresh_from_db()
    assert (study.adaptive_mode, study.adaptive_predictor) == (Study.Adaptive.FIXED, Study.Predictor.BETA_BINOMIAL)


def test_the_api_sets_model_allocation_where_the_check_says_it_helps(study):
    api = token_client(staff_with("annotation.change_study", "annotation.view_study"))
    refused = api.patch(f"/api/v1/studies/{study.pk}/", {"adaptive_mode": "allocate"}, format="json")
    assert refused.status_code == 400 and refused.json()["problems"][0]["field"] == "adaptive_mode"
    seed_design_check(study)
    reply = api.patch(f"/api/v1/studies/{study.pk}/", {"adaptive_mode": "allocate"}, format="json")
    assert reply.status_code == 200, reply.json()
    assert reply.json()["adaptive_mode"] == "allocate"
    shown = api.get(f"/api/v1/studies/{study.pk}/").json()["adaptive"]["design_check"]
    assert shown["allocate"]["beats_fixed"] is True


def test_the_api_tells_a_form_study_it_has_no_adaptive_designs_not_to_run_the_designer():
    form = StudyFactory(kind=Study.Kind.LISTENING_FORM, target_annotations=10)
    api = token_client(staff_with("annotation.change_study", "annotation.view_study"))
    reply = api.patch(f"/api/v1/studies/{form.pk}/", {"adaptive_mode": "allocate"}, format="json")
    assert reply.status_code == 400
    assert "Adaptive designs are for word-level emphasis studies only." in reply.content.decode()
    assert NO_CHECK not in reply.content.decode()  # the designer refuses form studies: no use sending them there
    form.refresh_from_db()
    assert form.adaptive_mode == Study.Adaptive.FIXED
