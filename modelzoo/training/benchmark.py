"""One benchmark run, end to end: read the export folder, choose the setting's clips, train a
detector (keeping its best epoch on validation), predict the test clips, score them per language
and pooled. Returns plain dicts (JSON-ready) for the caller (the Celery task) to store.

    result = run_benchmark(folder=..., detector="whisper-tokens", setting={"kind": "multilingual"},
                           checkpoint_dir=settings.MODELZOO_CHECKPOINT_DIR, progress=..., should_stop=...)
"""

import sys
import time
from pathlib import Path

from modelzoo.training.checkpoints import DEFAULT_BACKBONES
from modelzoo.training.data import load_folder
from modelzoo.training.detector_table import detector_spec
from modelzoo.training.detectors import detector_class
from modelzoo.training.detectors.base import Progress, StopCheck, check_stop, prediction_rows
from modelzoo.training.experiments import Setting, partition
from modelzoo.training.metrics import score

# EmphaClass halves its batch for multilingual and arousal runs (MMEE section 3)
SMALLER_BATCH_SETTINGS = {"frame-classifier": {"multilingual": 4, "cross-arousal": 4}}


def run_benchmark(
    *,
    folder: Path | str,
    detector: str,
    setting: Setting | dict,
    checkpoint_dir: Path | str | None = None,
    backbone: str | None = None,
    config: dict | None = None,
    test_folder: Path | str | None = None,
    output_dir: Path | str | None = None,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> dict | None:
    """Train `detector` ("acoustic", "frame-classifier", "whisper-tokens") on one setting of the
    set in `folder` and test it. `config` overrides the detector's defaults (MMEE's
    hyperparameters); `output_dir`, when given, receives the trained detector (load it with
    modelzoo.training.detectors.load_detector). `progress(phase, done, total)` is called as it goes;
    `should_stop()` is asked between steps, and a True stops the run with modelzoo.Cancelled.
    Under torchrun (modelzoo.training.launch) every rank calls it; rank 0 alone scores, saves and
    returns the result, the others return None."""
    report = progress or (lambda phase, done, total: None)
    started = time.monotonic()
    setting = setting if isinstance(setting, Setting) else Setting.from_dict(setting)
    report("reading the set", 0, 1)
    clips = load_folder(folder)
    other = load_folder(test_folder) if test_folder is not None else None
    chosen = partition(setting, clips, other)
    check_stop(should_stop)
    times = {"reading": time.monotonic()}

    cls = detector_class(detector)
    backbone = backbone or DEFAULT_BACKBONES.get(detector)
    model = cls(backbone, Path(checkpoint_dir) if checkpoint_dir else None)
    train_config = run_config(detector, setting, config)
    model.fit(chosen.train, chosen.validation, train_config, report, should_stop)
    times["training"] = time.monotonic()

    predictions = model.predict(chosen.test, report, should_stop)  # gathered from every rank
    times["prediction"] = time.monotonic()
    if not _main_rank():
        return None
    rows = prediction_rows(chosen.test, predictions)
    report("scoring", 0, 1)
    metrics = score(rows, resamples=resamples, seed=seed, by=setting.by)
    times["scoring"] = time.monotonic()
    if output_dir is not None:
        model.save(Path(output_dir))
    times["saving"] = time.monotonic()
    report("finished", 1, 1)
    return {
        "detector": detector,
        "backbone": backbone if detector_spec(detector).has_backbone else None,
        "setting": setting.as_dict(),
        "setting_label": setting.label,
        # what the run used: "auto" settings resolved (the physical batch, the feature cache)
        "config": model.config.as_dict(),
        "runtime": getattr(model, "runtime", {}),
        "clips": chosen.sizes(),
        "test_languages": sorted(metrics["by_language"]),
        "history": model.history,
        "metrics": metrics,
        "predictions": rows,
        "seconds": run_seconds(started, times, model.history),
    }


def run_seconds(started: float, times: dict, history: list[dict]) -> dict:
    """Where a run's time went: reading the set, training (with its epochs' training steps, data
    loading included, validation passes and best-state copies, summed from the history; the
    rest is building the model and the feature cache), predicting the test clips, scoring them
    (the bootstrap), saving the detector; and the total."""
    seconds, before = {}, started
    for phase, at in times.items():
        seconds[phase] = round(at - before, 3)
        before = at
    epochs = [record for record in history if "step_seconds" in record]
    for key, name in (("step_seconds", "steps"), ("validation_seconds", "validation"), ("copy_seconds", "copies")):
        seconds[name] = round(sum(record[key] for record in epochs), 3)
    seconds["total"] = round(before - started, 3)
    return seconds


def _main_rank() -> bool:
    """Whether this process scores and saves: under torchrun rank 0 only. Asked of
    modelzoo.training.distributed only where a neural detector loaded it (the acoustic baseline
    never imports torch)."""
    distributed = sys.modules.get("modelzoo.training.distributed")
    return distributed is None or distributed.is_main()


def run_config(detector: str, setting: Setting, overrides: dict | None):
    """The detector's defaults, adjusted for the setting as the paper did, then the caller's overrides."""
    defaults = detector_class(detector).config_class()
    batch = SMALLER_BATCH_SETTINGS.get(detector, {}).get(setting.kind)
    if batch is not None:
        defaults = defaults.with_overrides({"batch_size": batch})
    return defaults.with_overrides(overrides)
