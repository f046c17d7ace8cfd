"""Benchmark results as tables: one run's metrics per language, the cross-lingual matrix, the
data-scale curve, several runs side by side, and their CSV. Pure: plain dicts in, plain data out.

A run is given as a dict: id, label_set, detector, backbone, label_mode, setting (the Setting as a
dict), setting_label and metrics (run_benchmark's: {"pooled": group, "by_language": {code:
group}}, a group holding clips, words and each measure as {"value", "low", "high"}).

An interval from fewer than MIN_UNITS clips is not shown (nor written to the CSV), whenever the
run was scored: its entry says why instead (interval_undefined), as the agreement report does.
"""

import csv
import io
from collections.abc import Iterable

from evaluation.stats.intervals import too_few

MEASURES = ("accuracy", "f1", "pearson")
MEASURE_NAMES = {"accuracy": "accuracy", "f1": "F1", "pearson": "Pearson r"}
POOLED = "pooled"
RESULT_COLUMNS = (
    "run",
    "label_set",
    "detector",
    "backbone",
    "label_mode",
    "setting",
    "scope",
    "clips",
    "words",
    "measure",
    "value",
    "low",
    "high",
)
PREDICTION_COLUMNS = (
    "clip_id",
    "language",
    "variety",
    "word_index",
    "word",
    "binary_true",
    "binary_pred",
    "scalar_true",
    "scalar_pred",
)


def scopes(metrics: dict) -> list[tuple[str, dict]]:
    """(scope, group): pooled first, then each test language."""
    if not metrics:
        return []
    return [(POOLED, metrics["pooled"]), *sorted(metrics.get("by_language", {}).items())]


def shown(group: dict, measure: str) -> dict:
    """The group's entry of the measure, without an interval when the group has too few clips (runs
    scored before that rule carry one), saying why."""
    entry = group[measure]
    few = too_few(group["clips"], "clips")
    if not few or entry["value"] is None or entry["low"] is None:
        return entry
    return {**entry, "low": None, "high": None, "interval_undefined": few}


def metric_rows(metrics: dict, measures: Iterable[str] = MEASURES) -> list[dict]:
    """One row per scope: scope, clips, words, the words emphasized by the labels and marked by the
    detector (None for runs scored before they were counted), and the measures' entries in order."""
    measures = tuple(measures)
    return [
        {
            "scope": scope,
            "clips": group["clips"],
            "words": group["words"],
            "emphasized": group.get("emphasized"),
            "marked": group.get("marked"),
            "entries": [(measure, shown(group, measure)) for measure in measures],
        }
        for scope, group in scopes(metrics)
    ]


def result_records(runs: Iterable[dict]) -> list[dict]:
    """Every measure of every scope of every run, one record each (the CSV's rows)."""
    records = []
    for run in runs:
        for scope, group in scopes(run["metrics"]):
            for measure in MEASURES:
                entry = shown(group, measure)
                records.append(
                    {
                        "run": run["id"],
                        "label_set": run["label_set"],
                        "detector": run["detector"],
                        "backbone": run["backbone"] or "",
                        "label_mode": run["label_mode"],
                        "setting": run["setting_label"],
                        "scope": scope,
                        "clips": group["clips"],
                        "words": group["words"],
                        "measure": measure,
                        "value": entry["value"],
                        "low": entry["low"],
                        "high": entry["high"],
                    }
                )
    return records


def results_csv(runs: Iterable[dict]) -> str:
    return _csv(result_records(runs), RESULT_COLUMNS)


def predictions_csv(rows: Iterable[dict]) -> str:
    """run_benchmark's per-word predictions for the test clips, one CSV row per word."""
    return _csv(rows, PREDICTION_COLUMNS)


def _csv(rows: Iterable[dict], columns: tuple[str, ...]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows({key: "" if row.get(key) is None else row[key] for key in columns} for row in rows)
    return out.getvalue()


def cross_lingual_matrix(runs: Iterable[dict], measure: str) -> dict:
    """Train language (rows) x test language (columns) -> the measure's entry, from the
    cross-lingual runs (off the diagonal) and the monolingual runs (on it) of a group."""
    cells: dict[tuple[str, str], dict] = {}
    for run in runs:
        setting, metrics = run["setting"], run["metrics"]
        if not metrics or setting["kind"] not in ("cross-lingual", "monolingual"):
            continue
        train = setting["language"]
        for test, group in metrics.get("by_language", {}).items():
            if (test == train) == (setting["kind"] == "monolingual"):
                cells[(train, test)] = shown(group, measure)
    rows = sorted({train for train, _ in cells})
    columns = sorted({test for _, test in cells} | set(rows))
    return {"measure": measure, "rows": rows, "columns": columns, "cells": cells}


def data_scale_curve(runs: Iterable[dict], measure: str) -> list[tuple[int, dict]]:
    """(percent of the training clips, the pooled entry of the measure), by percent."""
    points = [
        (run["setting"]["percent"], shown(run["metrics"]["pooled"], measure))
        for run in runs
        if run["setting"]["kind"] == "data-scale" and run["metrics"]
    ]
    return sorted(points, key=lambda point: point[0])


def comparison(runs: list[dict], measures: Iterable[str] = MEASURES) -> list[dict]:
    """Runs side by side: one row per scope and measure, one entry per run (None where the run
    has no such scope, or no results yet)."""
    by_run = [dict(scopes(run["metrics"])) for run in runs]
    names = [POOLED, *sorted({scope for groups in by_run for scope in groups} - {POOLED})]
    return [
        {
            "scope": scope,
            "measure": measure,
            "entries": [shown(groups[scope], measure) if scope in groups else None for groups in by_run],
        }
        for scope in names
        for measure in measures
    ]


def history_rows(history: Iterable[dict]) -> list[dict]:
    """The training history as table rows: one per epoch (neural detectors) or per regularization
    candidate (the acoustic baseline), with its validation values and whether it was kept."""
    rows = []
    for record in history:
        if "epoch" in record:
            label, validation = f"epoch {record['epoch']}", record.get("validation", {})
        else:
            name = "C" if "C" in record else "alpha"
            label = f"{name} = {record[name]:g}"
            validation = {
                key.removeprefix("validation "): value for key, value in record.items() if key.startswith("validation ")
            }
        shown = ", ".join(
            f"{key} {'undefined' if value is None else f'{value:.3f}'}" for key, value in validation.items()
        )
        rows.append({"label": label, "loss": record.get("loss"), "validation": shown, "best": bool(record.get("best"))})
    return rows
