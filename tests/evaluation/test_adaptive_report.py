"""An adaptive study's agreement report says so, with agreement on all clips and on those annotated
to the target and the size of the selection effect (the designer's replicated fixed design beside
them), in its JSON, its CSV and on its page; a fixed study's report has no such section (the golden
report stays as it was)."""

import csv
import io
import json

import pytest

from annotation.models import Study
from evaluation.models import AgreementReport
from evaluation.reports.agreement_format import report_csv
from evaluation.services.agreement_reports import agreement_report_compute, report_parameters
from evaluation.services.study_designs import study_design_compute
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


def exact_report() -> tuple[Study, dict]:
    study, _ = run_study(adaptive_mode=Study.Adaptive.EXACT)
    return study, json.loads(
        agreement_report_compute(study=study, parameters=report_parameters(study=study, resamples=50))
    )


def test_the_report_gives_the_selection_effect_in_numbers_with_the_designers_fixed_design():
    study, report = exact_report()
    section = report["adaptive_design"]
    effect, agreement = section["selection_effect"], section["agreement"]
    whole, contested = agreement["all_clips"]["fleiss_kappa"], agreement["clips_annotated_to_target"]["fleiss_kappa"]
    assert (effect["kappa_all_clips"], effect["kappa_clips_at_target"]) == (whole, contested)
    assert effect["kappa_at_target_less_all"] == pytest.approx(contested - whole) and contested < whole
    # The designer's fixed design of the same target, replicated from the study's annotations as a pilot.
    design = study_design_compute(
        study=study,
        source="pilot",
        replicates=effect["replication"]["replicates"],
        simulated_clips=150,
        annotators=(TARGET,),
        modes=("fixed", "exact"),
    )
    fixed, exact = ({row.mode: row.kappa for row in design.rows}[mode] for mode in ("fixed", "exact"))
    assert effect["kappa_fixed_design_replicated"] == pytest.approx(fixed)
    assert effect["kappa_adaptive_design_replicated"] == pytest.approx(exact)
    assert effect["kappa_all_clips_less_fixed_replicated"] == pytest.approx(whole - fixed)
    assert section["stops_early"] is True


def test_the_csv_carries_the_design_and_the_selection_effect():
    _, report = exact_report()
    rows = [row for row in csv.DictReader(io.StringIO(report_csv(report))) if row["section"] == "adaptive_design"]
    values = {(row["dimension"], row["group"], row["measure"]): row["value"] for row in rows}
    effect = report["adaptive_design"]["selection_effect"]
    assert values[("design", "exact", "target")] == str(TARGET)
    assert values[("design", "exact", "clips_stopped_early")] == "3"
    for measure in ("kappa_all_clips", "kappa_clips_at_target", "kappa_fixed_design_replicated"):
        assert float(values[("selection_effect", "", measure)]) == pytest.approx(effect[measure])
    designer = next(row for row in rows if row["measure"] == "kappa_fixed_design_replicated")
    assert "study designer" in designer["method"]


def test_a_fixed_studys_csv_has_no_adaptive_rows():
    study, _ = run_study()
    report = json.loads(agreement_report_compute(study=study, parameters=report_parameters(study=study, resamples=50)))
    assert "adaptive_design" not in report_csv(report)


def test_the_page_gives_the_selection_effect(admin_client, django_capture_on_commit_callbacks):
    run_study(adaptive_mode=Study.Adaptive.EXACT)
    study = Study.objects.get()
    html = compute(
        admin_client, study, django_capture_on_commit_callbacks, **{**QUERY, "subsample": 0}
    ).content.decode()
    assert 'id="selection-effect"' in html and "Size of the selection effect" in html
    assert "replicated by the study designer" in html
    assert "Clips stop early when their listeners agree" in html


def test_model_allocation_is_not_said_to_stop_clips_early(admin_client, django_capture_on_commit_callbacks):
    run_study(adaptive_mode=Study.Adaptive.ALLOCATE, adaptive_min_annotators=3)
    study = Study.objects.get()
    html = compute(
        admin_client, study, django_capture_on_commit_callbacks, **{**QUERY, "subsample": 0}
    ).content.decode()
    report = json.loads(AgreementReport.objects.get().result_json)
    assert report["adaptive_design"]["stops_early"] is False
    assert "model allocation" in html and "No clip stops early under model allocation" in html
    assert "Clips stop early when their listeners agree" not in html and "stopped before" not in html
