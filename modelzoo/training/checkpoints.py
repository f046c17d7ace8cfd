"""Pretrained backbones, from a local folder only: nothing is ever downloaded.

The caller names the folder (the web side passes its MODELZOO_CHECKPOINT_DIR setting). A
backbone is found there in either Hugging Face layout:
- a `save_pretrained` folder at `<dir>/<repo id>` (e.g. `<dir>/openai/whisper-small`), or
- the hub cache layout, `<dir>/models--openai--whisper-small/snapshots/<revision>/`, so a
  copied `~/.cache/huggingface/hub` works as it is.
Names outside the registry are read as a folder relative to `<dir>` (tests put tiny models there).
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelzoo.training.detector_table import DETECTORS


class CheckpointMissing(FileNotFoundError):
    """The backbone is not in the checkpoint folder; the message names where it was looked for."""


@dataclass(frozen=True)
class Backbone:
    name: str
    family: str  # the model_type in its config.json: "whisper" or "wav2vec2"
    repo_id: str


REGISTRY = {
    backbone.name: backbone
    for backbone in (
        Backbone("whisper-small", "whisper", "openai/whisper-small"),  # MMEE's WhiStress (multilingual)
        Backbone("whisper-small.en", "whisper", "openai/whisper-small.en"),  # the original WhiStress
        Backbone("xls-r-1b", "wav2vec2", "facebook/wav2vec2-xls-r-1b"),  # MMEE's EmphaClass
        Backbone("xls-r-300m", "wav2vec2", "facebook/wav2vec2-xls-r-300m"),
    )
}
# By detector, for those with a backbone (modelzoo.training.detector_table declares them): the
# backbone it loads when a run names none, and the model_type that backbone must be.
DEFAULT_BACKBONES = {
    spec.name: spec.default_backbone for spec in DETECTORS.values() if spec.default_backbone is not None
}
FAMILIES = {spec.name: spec.family for spec in DETECTORS.values() if spec.has_backbone}


def backbone_path(name: str, checkpoint_dir: Path | str | None, *, family: str | None = None) -> Path:
    """The folder holding the backbone's config.json and weights; CheckpointMissing if absent,
    ValueError if it holds another kind of model than `family`."""
    if not checkpoint_dir:
        raise CheckpointMissing(f"no checkpoint folder was given to look for the backbone {name!r} in")
    root = Path(checkpoint_dir).resolve()
    candidates = _candidates(name, root)
    found = next((path for path in candidates if (path / "config.json").is_file()), None)
    if found is None:
        tried = " or ".join(str(path) for path in candidates)
        raise CheckpointMissing(
            f"backbone {name!r} not found: no config.json in {tried}. Put a Hugging Face checkpoint "
            "there (save_pretrained or hub-cache layout); nothing is downloaded."
        )
    if family is not None and model_type(found) != family:
        raise ValueError(f"{found} holds a {model_type(found)!r} model, not a {family!r} one")
    return found


def _candidates(name: str, root: Path) -> list[Path]:
    repo_id = REGISTRY[name].repo_id if name in REGISTRY else name
    direct = (root / repo_id).resolve()
    if not direct.is_relative_to(root):
        raise ValueError(f"backbone name {name!r} points outside the checkpoint folder")
    candidates = [direct]
    cache = root / ("models--" + repo_id.replace("/", "--"))
    if cache.is_dir():
        candidates.append(_cached_snapshot(cache))
    return candidates


def _cached_snapshot(cache: Path) -> Path:
    """The snapshot refs/main points to, else the only one there is."""
    main = cache / "refs" / "main"
    if main.is_file():
        return cache / "snapshots" / main.read_text().strip()
    snapshots = sorted((cache / "snapshots").glob("*"))
    return snapshots[0] if len(snapshots) == 1 else cache / "snapshots" / "main"


def model_type(path: Path) -> str:
    return json.loads((path / "config.json").read_text()).get("model_type", "")


# --- loading (torch and transformers imported here only) ---


@dataclass
class WhisperParts:
    """Any: transformers is not analysed (pyproject.toml, [tool.mypy]), and is imported in load_whisper only."""

    model: Any  # transformers.WhisperModel
    feature_extractor: Any  # transformers.WhisperFeatureExtractor
    tokenizer: Any  # a Whisper tokenizer (or one with the same special tokens)


def load_whisper(path: Path) -> WhisperParts:
    from transformers import AutoTokenizer, WhisperFeatureExtractor, WhisperModel

    return WhisperParts(
        model=WhisperModel.from_pretrained(path, local_files_only=True),
        feature_extractor=WhisperFeatureExtractor.from_pretrained(path, local_files_only=True),
        tokenizer=AutoTokenizer.from_pretrained(path, local_files_only=True),
    )


def load_wav2vec2(path: Path):
    """The Wav2Vec2 / XLS-R encoder without any head (transformers.Wav2Vec2Model)."""
    from transformers import Wav2Vec2Model

    return Wav2Vec2Model.from_pretrained(path, local_files_only=True)


def normalizes_audio(path: Path) -> bool:
    """Whether the checkpoint's feature extractor scales each clip to zero mean and unit variance
    (XLS-R's does); True when it has no preprocessor config."""
    config = path / "preprocessor_config.json"
    return json.loads(config.read_text()).get("do_normalize", True) if config.is_file() else True
