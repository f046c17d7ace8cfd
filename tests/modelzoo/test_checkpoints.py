"""The checkpoint registry: local folders only, clear errors."""

import shutil

import pytest

pytest.importorskip("torch")

from modelzoo.training.checkpoints import (
    CheckpointMissing,
    backbone_path,
    load_wav2vec2,
    load_whisper,
)
from tests.modelzoo.helpers import TINY_WAV2VEC2, TINY_WHISPER


def test_a_missing_backbone_names_the_folder_it_looked_in(tmp_path):
    with pytest.raises(CheckpointMissing) as error:
        backbone_path("whisper-small", tmp_path)
    assert str(tmp_path / "openai" / "whisper-small") in str(error.value)
    assert "nothing is downloaded" in str(error.value)


def test_no_checkpoint_folder_at_all_is_an_error():
    with pytest.raises(CheckpointMissing, match="no checkpoint folder"):
        backbone_path("xls-r-1b", None)


def test_names_cannot_leave_the_checkpoint_folder(tmp_path):
    with pytest.raises(ValueError, match="outside the checkpoint folder"):
        backbone_path("../elsewhere", tmp_path / "checkpoints")


def test_a_backbone_of_the_wrong_kind_is_refused(checkpoint_dir):
    with pytest.raises(ValueError, match="holds a 'wav2vec2' model, not a 'whisper' one"):
        backbone_path(TINY_WAV2VEC2, checkpoint_dir, family="whisper")


def test_registry_names_resolve_in_both_hugging_face_layouts(checkpoint_dir, tmp_path):
    # save_pretrained layout, under the repo id
    shutil.copytree(checkpoint_dir / TINY_WHISPER, tmp_path / "openai" / "whisper-small")
    assert backbone_path("whisper-small", tmp_path) == tmp_path / "openai" / "whisper-small"
    # hub-cache layout, the snapshot that refs/main names
    cache = tmp_path / "models--facebook--wav2vec2-xls-r-1b"
    shutil.copytree(checkpoint_dir / TINY_WAV2VEC2, cache / "snapshots" / "abc123")
    (cache / "refs").mkdir()
    (cache / "refs" / "main").write_text("abc123")
    assert backbone_path("xls-r-1b", tmp_path) == cache / "snapshots" / "abc123"


def test_tiny_models_load_through_the_registry(checkpoint_dir):
    whisper = load_whisper(backbone_path(TINY_WHISPER, checkpoint_dir, family="whisper"))
    assert whisper.model.config.d_model == 64 and "<|en|>" in whisper.tokenizer.get_vocab()
    assert whisper.feature_extractor.n_samples == 48000  # 3 s windows for tiny models
    encoder = load_wav2vec2(backbone_path(TINY_WAV2VEC2, checkpoint_dir, family="wav2vec2"))
    assert encoder.config.hidden_size == 64
