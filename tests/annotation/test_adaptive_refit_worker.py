"""The ordinal model's refit through a real Celery worker on a real broker, while a study runs:
participants go through the real pages (Django test client), each completed task asks for a refit
once the annotations have grown, and the worker stores the model that the next submissions use."""

import time

import pytest

from annotation.models import Annotation, Study
from annotation.services.adaptive_model import REFIT_GROWTH
from tests.annotation import test_adaptive_designs as pages
from tests.annotation.test_adaptive_ordinal import eager_or_wary, ordinal_settings
from tests.annotation.test_import_job_worker import celery_worker, reads_never_block_the_worker  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
TASK_NAME = "annotation.adaptive_model_refit"


def settled_model(study: Study, timeout: float = 60.0) -> dict:
    """The stored model once the worker has caught up with every refit asked for."""
    held = Annotation.objects.filter(item__study_item__study=study).count()
    deadline = time.monotonic() + timeout
    while True:
        model = Study.objects.get(pk=study.pk).adaptive_model
        if model.get("annotations", 0) * (1 + REFIT_GROWTH) >= held:
            return model
        if time.monotonic() > deadline:
            pytest.fail(f"the worker left the model at {model.get('annotations')} of {held} annotations")
        time.sleep(0.1)


def test_the_worker_refits_the_model_as_tasks_complete(celery_worker, reads_never_block_the_worker, monkeypatch):  # noqa: F811
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    study, _ = pages.run_study(**ordinal_settings())
    model = settled_model(study)
    refits = [d for d in celery_worker.deliveries if d["task"] == TASK_NAME]
    assert refits and all(not d["eager"] and d["args"] == [study.pk] for d in refits)
    assert model["model"] == "ordinal" and len(model["participants"]) >= 2
