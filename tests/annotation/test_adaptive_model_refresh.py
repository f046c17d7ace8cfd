"""How a refit of model allocation's model (annotation.services.adaptive_model) meets failures and
the submissions and refits around it: a refresh of the clips' priorities that failed is done by
the task's retry, a refresh stops once a newer model is stored, a submission reads the model stored
at that moment, a request queued while a fit ran costs no second fit, and a report follows a refit."""

import json

import numpy as np
import pytest
from django.db import OperationalError

from annotation.models import Annotation, Study
from annotation.services import adaptive_model
from annotation.services.adaptive import adaptive_record
from annotation.services.adaptive_model import (
    adaptive_model_summary,
    allocation_clip_priority,
    allocation_model_part,
    ordinal_model_refit,
)
from annotation.services.studies import study_setting_warnings
from evaluation.services.agreement_reports import agreement_report_current, agreement_report_request, report_parameters
from tests.annotation import test_adaptive_designs as pages
from tests.annotation.test_adaptive_ordinal import TYPICAL, WARY, allocating, eager_or_wary, pilot_model
from tests.evaluation.test_agreement_report_page import QUERY, compute

pytestmark = pytest.mark.django_db


def clip_rows(item_pk: int) -> list[tuple[int, list[int]]]:
    return list(
        Annotation.objects.filter(item__study_item_id=item_pk).order_by("pk").values_list("participant_id", "levels")
    )


def allocating_study() -> Study:
    """A model-allocation study run through the pages with no model yet (the test's transaction never
    commits, so no refit ran): every priority is the beta-binomial's."""
    return pages.run_study(adaptive_mode=Study.Adaptive.ALLOCATE, adaptive_min_annotators=3)[0]


def assert_priorities_of_the_stored_model(study: Study) -> None:
    study.refresh_from_db()
    for item in study.items.all():
        assert item.priority == pytest.approx(allocation_clip_priority(study, clip_rows(item.pk)))


def test_a_refresh_that_failed_is_done_by_the_retry(monkeypatch):
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    study = allocating_study()
    real = adaptive_model.allocation_clip_priority

    def locked_out(*args):
        raise OperationalError("database is locked")

    monkeypatch.setattr(adaptive_model, "allocation_clip_priority", locked_out)
    with pytest.raises(OperationalError):
        ordinal_model_refit(study_id=study.pk)
    study.refresh_from_db()
    assert study.adaptive_model["priorities"] == "pending"  # the model was stored, the priorities not

    monkeypatch.setattr(adaptive_model, "allocation_clip_priority", real)
    assert ordinal_model_refit(study_id=study.pk) is None  # the retry: no new fit, the stored one stands
    study.refresh_from_db()
    assert study.adaptive_model["priorities"] == "refreshed"
    assert_priorities_of_the_stored_model(study)


def test_a_refresh_stops_once_a_newer_model_is_stored(monkeypatch):
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    study = allocating_study()
    before = dict(study.items.values_list("pk", "priority"))
    newer = {**pilot_model(), "annotations": 10_000, "fitted_at": "2030-01-01T00:00:00+00:00"}
    newer["allocation"] = allocation_model_part(np.array([TYPICAL]), np.asarray(newer["prior"]))
    newer["priorities"] = "pending"
    real, calls = adaptive_model.allocation_clip_priority, []

    def then_a_newer_refit_stores(study_, annotations):
        calls.append(1)
        Study.objects.filter(pk=study.pk).update(adaptive_model=newer)  # as a refit finishing meanwhile
        return real(study_, annotations)

    monkeypatch.setattr(adaptive_model, "REFRESH_BATCH", 1)
    monkeypatch.setattr(adaptive_model, "allocation_clip_priority", then_a_newer_refit_stores)
    ordinal_model_refit(study_id=study.pk)
    assert len(calls) == 1  # the first clip; the next batch found the newer model and left it to its refit
    after = dict(study.items.values_list("pk", "priority"))
    assert sum(after[pk] != before[pk] for pk in before) == 1
    study.refresh_from_db()
    assert study.adaptive_model == newer  # neither replaced nor marked refreshed by the older refit


def test_a_submission_reads_the_model_stored_at_that_moment():
    study, _ = pages.run_study(**allocating())
    held = Study.objects.get(pk=study.pk)  # as a submission holds it, read before its transaction
    newer = pilot_model({str(pk): WARY for pk in study.participants.values_list("pk", flat=True)})
    newer["allocation"] = {**allocating()["adaptive_model"]["allocation"]}
    Study.objects.filter(pk=study.pk).update(adaptive_model=newer)
    item = study.items.order_by("pk").first()
    rows = clip_rows(item.pk)

    recorded = adaptive_record(study=held, study_item_id=item.pk, levels=rows[-1][1])

    study.refresh_from_db()
    under_newer = allocation_clip_priority(study, rows)
    assert recorded.priority == pytest.approx(under_newer)
    assert under_newer != pytest.approx(allocation_clip_priority(Study(**allocating()), rows))


def test_a_refit_asked_for_while_a_fit_ran_finds_it_done(monkeypatch):
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    study = allocating_study()
    assert ordinal_model_refit(study_id=study.pk) is not None

    def no_second_fit(**kwargs):
        raise AssertionError("a refit that was no longer due fitted again")

    monkeypatch.setattr(adaptive_model, "ordinal_state_fit", no_second_fit)
    assert ordinal_model_refit(study_id=study.pk) is None


def test_the_summary_names_only_a_model_the_design_reads(monkeypatch):
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    study, _ = pages.run_study(adaptive_mode=Study.Adaptive.ALLOCATE, adaptive_model=pilot_model())
    assert adaptive_model_summary(study) == {}  # no fine-grid part: allocation reads the beta-binomial
    ordinal_model_refit(study_id=study.pk)
    study.refresh_from_db()
    assert (
        adaptive_model_summary(study)["annotations"] == Annotation.objects.filter(item__study_item__study=study).count()
    )


def test_a_report_follows_a_refit_that_came_with_no_new_annotation(django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    study = allocating_study()
    parameters = report_parameters(study=study, resamples=0)
    with django_capture_on_commit_callbacks(execute=True):
        agreement_report_request(study=study, parameters=parameters)
    report = agreement_report_current(study=study, parameters=parameters)
    assert json.loads(report.result_json)["adaptive_design"]["settings"]["ordinal_model"] == {}

    ordinal_model_refit(study_id=study.pk)
    study.refresh_from_db()
    assert agreement_report_current(study=study, parameters=parameters) is None  # stale: a new one is computed


def test_the_report_of_model_allocation_names_its_model(admin_client, django_capture_on_commit_callbacks):
    study, _ = pages.run_study(**allocating())
    page = compute(admin_client, study, django_capture_on_commit_callbacks, **{**QUERY, "subsample": 0})
    assert (
        "Each further listener went where the ordinal annotator model expected most, last fitted to 100 annotations"
        in page.content.decode()
    )


@pytest.mark.parametrize(
    ("design", "warning"),
    [
        (
            {"adaptive_mode": Study.Adaptive.EXACT, "adaptive_predictor": Study.Predictor.ORDINAL},
            "The adaptive design is exact stopping, which ignores the predictor of further marks",
        ),
        (
            {"adaptive_mode": Study.Adaptive.ALLOCATE, "adaptive_scalar_se": 0.1},
            "The adaptive design is model allocation, which ignores the scalar standard-error bound",
        ),
        (
            {"adaptive_predictor": Study.Predictor.ORDINAL},
            "The adaptive design is fixed, which ignores the predictor of further marks",
        ),
    ],
)
def test_a_setting_the_design_ignores_is_named_in_a_warning(design, warning):
    study = pages.live_study(clips=4, target_annotations=pages.TARGET, clips_per_task=4, **design)
    assert any(text.startswith(warning) for text in study_setting_warnings(study=study))


def test_settings_the_design_reads_give_no_warning():
    study = pages.live_study(
        clips=4,
        target_annotations=pages.TARGET,
        clips_per_task=4,
        adaptive_mode=Study.Adaptive.PROBABILISTIC,
        adaptive_predictor=Study.Predictor.ORDINAL,
        adaptive_scalar_se=0.1,
    )
    assert study_setting_warnings(study=study) == []
