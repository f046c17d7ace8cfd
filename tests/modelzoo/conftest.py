"""Shared fixtures: a synthetic label-set export folder and tiny random backbones in a checkpoint
folder, each built once per session. Nothing is downloaded: the hub is switched off before
transformers is imported."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"

import pytest

from modelzoo.training.synthetic import synthetic_set, write_export_folder
from tests.modelzoo.helpers import (
    TINY_WAV2VEC2,
    TINY_WAV2VEC2_DETERMINISTIC,
    TINY_WHISPER,
    WAV2VEC2_WITHOUT_RANDOMNESS,
)


@pytest.fixture(scope="session")
def export_folder(tmp_path_factory):
    """Two languages, 20 clips each (16 train, 2 validation, 2 test), 4 words a clip."""
    folder = tmp_path_factory.mktemp("export")
    clips = synthetic_set(20, seed=3, languages=("en", "de"), words=4)
    return write_export_folder(folder, clips)


@pytest.fixture(scope="session")
def checkpoint_dir(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.utils import logging

    from modelzoo.training import random_backbones
    from modelzoo.training.random_backbones import save_wav2vec2, save_whisper

    logging.disable_progress_bar()
    folder = tmp_path_factory.mktemp("checkpoints")
    save_whisper(folder / TINY_WHISPER)
    save_wav2vec2(folder / TINY_WAV2VEC2)
    save_wav2vec2(
        folder / TINY_WAV2VEC2_DETERMINISTIC, {**random_backbones.TINY_WAV2VEC2, **WAV2VEC2_WITHOUT_RANDOMNESS}
    )
    return folder
