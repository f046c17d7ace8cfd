"""Reads the benchmark pages, the API and the launch share."""

from collections.abc import Iterable

from django.db.models import Count

from evaluation.models import LabelSet, LabelSetClip
from modelzoo.models import BenchmarkRun

SPLITS = {"train", "validation", "test"}


def trainable_languages(*, label_set: LabelSet, by: str = "language") -> list[str]:
    """The languages (or regional varieties) of the set with train, validation and test clips:
    those a model can be trained, chosen and tested on."""
    counts = LabelSetClip.objects.filter(label_set=label_set).values_list(by, "split").annotate(n=Count("pk"))
    splits: dict[str, set[str]] = {}
    for code, split, _ in counts:
        splits.setdefault(code, set()).add(split)
    return sorted(code for code, present in splits.items() if code and present >= SPLITS)


def runs_with_sets():
    return BenchmarkRun.objects.select_related("label_set", "test_label_set", "created_by")


def group_runs(*, group) -> list[BenchmarkRun]:
    return list(runs_with_sets().filter(group=group).order_by("pk"))  # the launch's order: the plan's


def run_summary(run: BenchmarkRun) -> dict:
    """The run as modelzoo.results reads it."""
    return {
        "id": run.pk,
        "label_set": str(run.label_set),
        "detector": run.detector,
        "backbone": (run.details or {}).get("backbone") or run.backbone,
        "label_mode": run.label_mode,
        "setting": run.setting,
        "setting_label": run.setting_label,
        "metrics": run.metrics,
    }


def human_agreement(*, label_sets: Iterable[LabelSet]) -> list[dict]:
    """The agreement of the annotations behind each set (its summary, per study: pooled and per
    language), to read the detectors' scores against."""
    rows, seen = [], set()
    for label_set in label_sets:
        if label_set.pk in seen:
            continue
        seen.add(label_set.pk)
        for study, agreement in sorted((label_set.summary or {}).get("agreement", {}).items()):
            scopes = [("pooled", agreement.get("pooled") or {}), *sorted(agreement.get("language", {}).items())]
            rows += [
                {"label_set": str(label_set), "study": study, "scope": scope, **figures} for scope, figures in scopes
            ]
    return rows


def run_results(run: BenchmarkRun) -> dict:
    """What a finished run found, as the results download and the API give it."""
    return {
        "run": run.pk,
        "group": str(run.group),
        "label_set": str(run.label_set),
        "test_label_set": str(run.test_label_set) if run.test_label_set else None,
        "detector": run.detector,
        "label_mode": run.label_mode,
        "measures": list(run.measures),
        "setting": run.setting,
        "setting_label": run.setting_label,
        "metrics": run.metrics,
        "details": run.details,
        # the test set's too, for a cross-dataset run: its labels are the ones scored
        "human_agreement": human_agreement(label_sets=[s for s in (run.label_set, run.test_label_set) if s]),
        "trained_on": label_provenance(run.label_set),
        "tested_against": label_provenance(run.test_label_set or run.label_set),
    }


def label_provenance(label_set) -> dict:
    """Where a set's labels come from, so a result says what it was tested against."""
    return {
        "label_set": str(label_set),
        "label_source": label_set.label_source,
        "label_kind": label_set.label_kind,
        "dataset": label_set.source.get("dataset", ""),
        "provenance": label_set.provenance,
    }
