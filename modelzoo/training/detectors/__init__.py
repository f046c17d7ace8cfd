"""The detectors, by the name a benchmark run gives (modelzoo.training.detector_table declares
them). Their modules are imported only when asked for, so choosing the acoustic baseline never
imports torch."""

from importlib import import_module
from pathlib import Path

from modelzoo.training.detector_table import detector_spec
from modelzoo.training.detectors.base import MANIFEST, Detector


def detector_class(kind: str) -> type[Detector]:
    module, name = detector_spec(kind).implementation.split(":")
    return getattr(import_module(module), name)


def load_detector(directory: Path | str, *, checkpoint_dir: Path | str | None = None) -> Detector:
    """A trained detector saved with `save(directory)`, whichever kind it is."""
    import json

    manifest = Path(directory) / MANIFEST
    if not manifest.is_file():
        raise FileNotFoundError(f"no trained detector in {directory} ({MANIFEST} is missing)")
    kind = json.loads(manifest.read_text())["kind"]
    return detector_class(kind).load(Path(directory), checkpoint_dir=Path(checkpoint_dir) if checkpoint_dir else None)
