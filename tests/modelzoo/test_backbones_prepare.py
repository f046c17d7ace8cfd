"""manage.py backbones_prepare (what `make gpu-worker` runs before starting the worker): the
backbones in MODELZOO_CHECKPOINT_DIR, downloaded once, or tiny random ones made here for a laptop.
Nothing is downloaded in these tests (tests/modelzoo/conftest.py switches the hub off)."""

import json

import pytest
from django.core.management import CommandError, call_command

from modelzoo.management.commands.backbones_prepare import TINY_RANDOM_FOLDERS
from modelzoo.services.benchmark_runs import _check_backbone_present
from modelzoo.training.checkpoints import backbone_path


@pytest.fixture
def checkpoints(settings, tmp_path):
    settings.MODELZOO_CHECKPOINT_DIR = tmp_path / "checkpoints"
    return settings.MODELZOO_CHECKPOINT_DIR


def test_tiny_random_backbones_are_made_once_and_a_launch_finds_them(checkpoints, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")

    call_command("backbones_prepare", "tiny-random")
    whisper = backbone_path(TINY_RANDOM_FOLDERS["whisper"], checkpoints, family="whisper")
    xls_r = backbone_path(TINY_RANDOM_FOLDERS["xls-r"], checkpoints, family="wav2vec2")
    made = {path: (path / "config.json").stat().st_mtime_ns for path in (whisper, xls_r)}
    call_command("backbones_prepare", "tiny-random")  # kept, not made again

    assert {path: (path / "config.json").stat().st_mtime_ns for path in made} == made
    # Whisper's 30 s window, as the real one's, so that any clip of a label set fits.
    assert json.loads((whisper / "config.json").read_text())["max_source_positions"] == 1500
    _check_backbone_present("whisper-tokens", TINY_RANDOM_FOLDERS["whisper"])  # a launch would not refuse it
    _check_backbone_present("frame-classifier", TINY_RANDOM_FOLDERS["xls-r"])
    assert f"{whisper}: ready (random weights)" in capsys.readouterr().out


def test_a_backbone_already_there_is_kept_without_asking_the_hub(checkpoints, capsys):
    folder = checkpoints / "openai" / "whisper-small"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "whisper"}')

    call_command("backbones_prepare", "whisper-small")

    assert f"{folder}: ready" in capsys.readouterr().out


def test_a_name_that_is_no_backbone_is_refused_naming_what_would_be(checkpoints):
    with pytest.raises(CommandError, match=r"'whisper' is neither a backbone of the registry \(whisper-small, "):
        call_command("backbones_prepare", "whisper")
