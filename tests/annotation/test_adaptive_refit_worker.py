"""The ordinal model's refit through a real Celery worker on a real broker, while a study runs:
participants go through the real pages (Django test client), each completed task asks for a refit
once the annotations have grown, and the worker stores the model that the next submissions use;
for model allocation it also gives every clip the model's priority while submissions go on."""

import time
from contextlib import nullcontext

import pytest
from django.db import connection

from annotation.models import Annotation, Study
from annotation.services.adaptive_model import REFIT_GROWTH, allocation_clip_priority
from tests.annotation import test_adaptive_designs as pages
from tests.annotation.test_adaptive_ordinal import eager_or_wary, ordinal_settings
from tests.annotation.test_import_job_worker import celery_worker, reads_never_block_the_worker  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
TASK_NAME = "annotation.adaptive_model_refit"


def settled_model(study: Study, timeout: float = 60.0) -> dict:
    """The stored model once the worker has caught up with every refit asked for (for model
    allocation: and has given every clip the model's priority)."""
    held = Annotation.objects.filter(item__study_item__study=study).count()
    deadline = time.monotonic() + timeout
    while True:
        model = Study.objects.get(pk=study.pk).adaptive_model
        caught_up = model.get("annotations", 0) * (1 + REFIT_GROWTH) >= held
        if caught_up and model.get("priorities", "refreshed") == "refreshed":
            return model
        if time.monotonic() > deadline:
            pytest.fail(f"the worker left the model at {model.get('annotations')} of {held} annotations")
        time.sleep(0.1)


def beside_the_participants(worker):
    """On PostgreSQL the worker refits while participants submit. The tests' in-memory SQLite locks
    whole tables across connections, so that a refit's write fails a submission's at once (a file
    database in WAL mode, as deployed, waits): there the refits asked for wait until the
    participants are done."""
    return nullcontext() if connection.vendor == "postgresql" else worker.held()


def test_the_worker_refits_the_model_as_tasks_complete(celery_worker, reads_never_block_the_worker, monkeypatch):  # noqa: F811
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    with beside_the_participants(celery_worker):
        study, _ = pages.run_study(**ordinal_settings())
    model = settled_model(study)
    refits = [d for d in celery_worker.deliveries if d["task"] == TASK_NAME]
    assert refits and all(not d["eager"] and d["args"] == [study.pk] for d in refits)
    assert model["model"] == "ordinal" and len(model["participants"]) >= 2


@pytest.mark.postgres
@pytest.mark.usefixtures("celery_worker", "reads_never_block_the_worker")
def test_the_worker_gives_every_clip_the_refitted_models_priority(monkeypatch):
    if connection.vendor != "postgresql":
        # The tests' in-memory SQLite locks whole tables across connections: the worker's refresh of
        # the clips would fail the submissions at once (a file database in WAL mode, as deployed, waits).
        pytest.skip("the refresh beside live submissions is tested on PostgreSQL")
    monkeypatch.setattr(pages, "levels_of", eager_or_wary)
    study, _ = pages.run_study(adaptive_mode=Study.Adaptive.ALLOCATE, adaptive_min_annotators=3)
    settled_model(study)
    study.refresh_from_db()
    for item in study.items.all():
        rows = list(
            Annotation.objects.filter(item__study_item=item).order_by("pk").values_list("participant_id", "levels")
        )
        assert item.priority == pytest.approx(allocation_clip_priority(study, rows))
