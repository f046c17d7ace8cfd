"""Benchmark runs, the web side: launch (one run per model, queued for a GPU worker), cancel,
and short-lived download links to a run's stored files. No training code here: the worker's side
is modelzoo.services.benchmark_training, which only the Celery task imports.
"""

import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F, TextField, Value
from django.db.models.functions import Concat
from django.utils import timezone

from annotation.refusals import Refused
from annotation.shared.jobs import job_enqueue, job_fail_unattended
from annotation.signed_links import Grant, granted_file, signed_file_url
from evaluation.models import LabelSet
from evaluation.stats.label_sets import SCALE_STEPS
from modelzoo.models import BenchmarkRun
from modelzoo.plans import Plan, check_backbone, plan_settings, run_overrides
from modelzoo.selectors.benchmark_runs import trainable_languages
from modelzoo.training.checkpoints import DEFAULT_BACKBONES, FAMILIES, CheckpointMissing, backbone_path
from modelzoo.training.detector_table import DETECTORS
from modelzoo.training.experiments import Setting

Status = BenchmarkRun.Status
LINK_TTL_SECONDS = 600  # long enough to start a download; a download under way is not cut off
FILES = {"predictions": "predictions.csv", "checkpoint": "checkpoint.zip"}
_LINK_PURPOSE = "modelzoo.benchmark-file"


class BenchmarkRefused(Refused, ValueError):
    """A launch or an action that cannot be done as asked; the message says why, `field` which
    launch field it is about (None: the launch as a whole)."""

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.field = field


def benchmark_runs_launch(
    *,
    label_set: LabelSet,
    detector: str,
    label_mode: str,
    plan: Plan,
    test_label_set: LabelSet | None = None,
    backbone: str = "",
    config: dict | None = None,
    resamples: int = 1000,
    seed: int = 0,
    devices: int = 1,
    user=None,
) -> list[BenchmarkRun]:
    """One queued run per model the plan needs (see modelzoo.plans), sharing a group id; each is
    sent to the `gpu` queue once this transaction commits. Everything a worker would refuse is
    refused here first: sets that are not final, unknown hyperparameters, settings the set
    cannot give."""
    _check_sets(label_set, test_label_set, plan.kind)
    _check_label_mode(label_set, test_label_set, label_mode)
    _check_devices(detector, devices)
    try:
        overrides = run_overrides(detector=detector, label_mode=label_mode, overrides=config)
        backbone = check_backbone(detector, backbone)
        steps = label_set.parameters.get("scale_steps") or list(SCALE_STEPS)
        settings = plan_settings(
            plan, languages=trainable_languages(label_set=label_set, by=plan.by), scale_steps=steps
        )
    except ValueError as error:
        raise BenchmarkRefused(str(error)) from None
    _check_backbone_present(detector, backbone)
    common = {
        "group": uuid.uuid4(),
        "label_set": label_set,
        "test_label_set": test_label_set,
        "detector": detector,
        "backbone": backbone,
        "label_mode": label_mode,
        "config_overrides": overrides,
        "resamples": resamples,
        "seed": seed,
        "devices": devices,
        "created_by": user if user is not None and user.is_authenticated else None,
    }
    with transaction.atomic():
        runs = [_create_run(setting, common) for setting in settings]
        for run in runs:
            job_enqueue(run)
    return runs


def _create_run(setting: dict, common: dict) -> BenchmarkRun:
    label = Setting.from_dict(setting).label
    return BenchmarkRun.objects.create(setting_kind=setting["kind"], setting=setting, setting_label=label, **common)


def _check_backbone_present(detector: str, backbone: str) -> None:
    """Refuse a backbone that is not in the checkpoint folder, where this process sees that folder.
    A web server on another machine than the GPU workers may have none (or another one): then the
    worker is the one to check, and fails the run naming the folder."""
    folder = Path(settings.MODELZOO_CHECKPOINT_DIR)
    if detector not in FAMILIES or not folder.is_dir():
        return
    try:
        backbone_path(backbone or DEFAULT_BACKBONES[detector], folder, family=FAMILIES[detector])
    except (CheckpointMissing, ValueError) as error:
        raise BenchmarkRefused(f"{error} (MODELZOO_CHECKPOINT_DIR is {folder})", field="backbone") from None


MAX_DEVICES = 64  # more than any one machine has: the worker's box must hold them all


def _check_devices(detector: str, devices: int) -> None:
    if not 1 <= devices <= MAX_DEVICES:
        raise BenchmarkRefused(f"devices must be between 1 and {MAX_DEVICES} (one worker's machine), not {devices}")
    spec = DETECTORS.get(detector)  # an unknown one is refused with the hyperparameters
    if devices > 1 and spec is not None and not spec.needs_gpu:
        raise BenchmarkRefused(f"the {spec.short_label} trains on the CPU in one process: it takes 1 device")


def _check_sets(label_set: LabelSet, test_label_set: LabelSet | None, kind: str) -> None:
    for chosen in (label_set, test_label_set):
        if chosen is not None and not chosen.is_final:
            raise BenchmarkRefused(
                f"{chosen} is a {chosen.lifecycle}: benchmarks run on final (or archived) label sets"
            )
    if (kind == "cross-dataset") != (test_label_set is not None):
        raise BenchmarkRefused("a second label set to test on goes with the cross-dataset setting, and only with it")
    if test_label_set is not None and test_label_set.pk == label_set.pk:
        raise BenchmarkRefused("cross-dataset tests on a different label set than the one it trains on")


def _check_label_mode(label_set: LabelSet, test_label_set: LabelSet | None, label_mode: str) -> None:
    """A binary-only set (an imported dataset, a binary study) has no scalar label to train on or
    to score a scalar head against: only the binary mode runs on it."""
    for chosen in (label_set, test_label_set):
        if chosen is not None and chosen.is_binary_only and label_mode != "binary":
            raise BenchmarkRefused(
                f"{chosen} has binary labels only ({chosen.provenance}): it cannot train or test a scalar head; "
                f'choose the label mode "binary", not {label_mode!r}',
                field="label_mode",
            )


def benchmark_run_cancel(*, run: BenchmarkRun) -> BenchmarkRun:
    """Ask the run to stop. A worker running it stops at its next step; a run no worker holds (still
    queued, or its worker gone silent) ends at once. Either way it ends failed, "cancelled"."""
    if not BenchmarkRun.objects.filter(pk=run.pk, status__in=(Status.QUEUED, Status.RUNNING)).update(
        cancel_requested=True
    ):
        run.refresh_from_db()
        raise BenchmarkRefused(f"run {run.pk} has already ended ({run.status}): there is nothing to cancel")
    benchmark_run_log(run_id=run.pk, line="cancel requested")
    job_fail_unattended(model=BenchmarkRun, job_id=run.pk, error=BenchmarkRun.CANCELLED)
    run.refresh_from_db()
    return run


def benchmark_run_log(*, run_id: int, line: str, attempt: int | None = None) -> bool:
    """Append a time-stamped line to the run's log; with `attempt`, only while that attempt still
    holds the run (a worker whose claim is gone writes nothing). Whether it was written."""
    rows = BenchmarkRun.objects.filter(pk=run_id)
    if attempt is not None:
        rows = rows.filter(status=Status.RUNNING, attempts=attempt)
    stamp = timezone.now().strftime("%Y-%m-%d %H:%M:%S")
    return bool(rows.update(log=Concat(F("log"), Value(f"{stamp} {line}\n"), output_field=TextField())))


def benchmark_file_link(*, run: BenchmarkRun, kind: str) -> str:
    """A download link to the run's "predictions" or "checkpoint", valid for LINK_TTL_SECONDS:
    presigned on S3, the modelzoo:file_download view locally (a path: make it absolute with
    request.build_absolute_uri). Whoever holds it may download."""
    stored = getattr(run, kind) if kind in FILES else None
    if run.status != Status.SUCCEEDED or not stored:
        raise BenchmarkRefused(f"run {run.pk} has no {kind} file to download ({run.status})")
    return signed_file_url(
        stored.name,
        purpose=_LINK_PURPOSE,
        view="modelzoo:file_download",
        ttl_seconds=LINK_TTL_SECONDS,
        download_name=f"benchmark-run-{run.pk}-{run.detector}-{FILES[kind]}",
    )


def benchmark_file_grant(*, token: str) -> Grant:
    """The file a local download link grants; signing.BadSignature if forged or expired."""
    return granted_file(token, purpose=_LINK_PURPOSE)
