"""MODELZOO_CHECKPOINT_DIR: where a lab puts its backbones; DATA_DIR/checkpoints unless set."""

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.env import folder


def test_the_checkpoint_folder_defaults_to_the_data_folder(tmp_path):
    assert folder({}, "MODELZOO_CHECKPOINT_DIR", tmp_path / "checkpoints") == tmp_path / "checkpoints"
    assert settings.MODELZOO_CHECKPOINT_DIR == settings.DATA_DIR / "checkpoints"


def test_a_given_folder_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert folder({"MODELZOO_CHECKPOINT_DIR": "models"}, "MODELZOO_CHECKPOINT_DIR", tmp_path) == tmp_path / "models"
    assert folder({"MODELZOO_CHECKPOINT_DIR": " "}, "MODELZOO_CHECKPOINT_DIR", tmp_path / "x") == tmp_path / "x"


def test_a_file_is_refused_naming_the_variable(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(ImproperlyConfigured, match="MODELZOO_CHECKPOINT_DIR must be a folder, not the file"):
        folder({"MODELZOO_CHECKPOINT_DIR": str(tmp_path / "weights.bin")}, "MODELZOO_CHECKPOINT_DIR", tmp_path)


def test_benchmark_tasks_go_to_the_gpu_queue():
    from config.celery import app

    app.loader.import_default_modules()
    assert app.amqp.router.route({}, "modelzoo.benchmark_run_train")["queue"].name == "gpu"
    assert app.amqp.router.route({}, "evaluation.dataset_export_run")["queue"].name == "celery"
