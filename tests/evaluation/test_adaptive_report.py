"""An adaptive study's agreement report says so, with agreement on all clips and on those annotated
to the target; a fixed study's report has no such section (the golden report stays as it was)."""

import json

import pytest

from annotation.models import Study
from evaluation.models import AgreementReport
from evaluation.services.agreement_reports import agreement_report_compute, report_parameters
from tests.annotation.test_adaptive_designs import TARGET, run_study
from tests.evaluation.test_agreement_report_page import QUERY, compute

pytestmark = pytest.mark.django_db


def test_the_report_of_an_exact_stopping_study_discloses_the_design():
    study, _ = run_study(adaptive_mode=Study.Adaptive.EXACT)
    parameters = report_parameters(study=study, resamples=50)
    assert parameters.subsample is None  # stopped clips are kept, with the annotations they have

    report = json.loads(agreement_report_compute(study=study, parameters=parameters))

    section = report["adaptive_design"]
    assert section["mode"] == "exact" and section["target"] == TARGET
    assert section["clips"] == {"stopped_early": 3, "at_target": 1, "past_target": 0}
    assert section["annotations"] == 3 * 4 + TARGET and section["fixed_design_annotations"] == 4 * TARGET
    assert section["agreement"]["all_clips"]["words"] == 40
    assert section["agreement"]["clips_annotated_to_target"]["words"] == 10
    whole, contested = (section["agreement"][k]["fleiss_kappa"] for k in ("all_clips", "clips_annotated_to_target"))
    assert whole > contested  # the clips that stopped early are those the listeners agreed on
    assert report["data"]["clips_used"] == 4


def test_the_report_page_shows_the_adaptive_section(admin_client, django_capture_on_commit_callbacks):
    study, _ = run_study(adaptive_mode=Study.Adaptive.PROBABILISTIC, adaptive_prior={"a": 0.3, "b": 1.0})
    page = compute(admin_client, study, django_capture_on_commit_callbacks, **{**QUERY, "subsample": 0})
    html = page.content.decode()
    assert AgreementReport.objects.get().status == AgreementReport.Status.SUCCEEDED
    assert 'id="adaptive-design"' in html and "probabilistic stopping" in html
    assert f"clips annotated to {TARGET} or more" in html


def test_a_fixed_studys_report_has_no_adaptive_section():
    study, _ = run_study()
    report = json.loads(agreement_report_compute(study=study, parameters=report_parameters(study=study, resamples=50)))
    assert "adaptive_design" not in report
