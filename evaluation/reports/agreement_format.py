"""A report as bytes: canonical JSON and a tidy CSV. Pure.

Canonical JSON: keys sorted, numpy values made Python values, floats rounded to 10 decimals
(-0.0 written as 0.0), NaN and infinities refused (an undefined value is null with a reason),
two-space indent, ASCII only. The same report dict always gives the same bytes.
"""

import csv
import io
import json
import math

import numpy as np

from evaluation.reports.drilldown import drilldown_csv_rows

DECIMALS = 10
CSV_COLUMNS = [
    "section",
    "dimension",
    "group",
    "measure",
    "value",
    "se",
    "ci_low",
    "ci_high",
    "method",
    "clips",
    "words",
    "note",
]


def canonical(value):
    if isinstance(value, dict):
        return {str(key): canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(item) for item in value]
    if isinstance(value, np.ndarray):
        return [canonical(item) for item in value.tolist()]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"a report cannot hold {number!r}; undefined values are null with a reason")
        rounded = round(number, DECIMALS)
        return 0.0 if rounded == 0 else rounded
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"a report cannot hold {type(value).__name__}")


def report_json(report: dict) -> str:
    return json.dumps(canonical(report), sort_keys=True, indent=2, ensure_ascii=True) + "\n"


def report_csv(report: dict) -> str:
    """One row per number: agreement, emphasis, scalar histogram, mismatch and annotator figures."""
    report = canonical(report)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in _rows(report):
        writer.writerow({column: _cell(row.get(column)) for column in CSV_COLUMNS})
    return buffer.getvalue()


def agreement_groups(report: dict):
    """(dimension, group, result) for the pooled result and every group of clips, then every
    group of annotators, in report order."""
    agreement = report["agreement"]
    if "pooled" in agreement:
        yield "pooled", "", agreement["pooled"]
    for dimension in ("language", "variety", "emotion"):
        for group, result in sorted(agreement.get(dimension, {}).items()):
            yield dimension, group, result
    # Groups of annotators by the headphone check and the self-reported headphone question
    # (evaluation.reports.group_agreement), in the order the report gives them.
    for group in report.get("headphone_check", {}).get("agreement_by_group", []):
        yield "headphone check", group["label"], group["agreement"]


def _rows(report: dict):
    for dimension, group, result in agreement_groups(report):
        base = {
            "section": "agreement",
            "dimension": dimension,
            "group": group,
            "clips": result["clips"],
            "words": result["words"],
        }
        cohen = result["cohen"]
        boot = cohen.get("bootstrap") or {}
        ci = boot.get("ci95") or [None, None]
        yield base | {
            "measure": "cohen_mean_pairwise",
            "value": cohen["value"],
            "se": boot.get("se"),
            "ci_low": ci[0],
            "ci_high": ci[1],
            "method": cohen["weighting"] + ("; percentile bootstrap over clips" if boot else ""),
            "note": cohen["undefined"]
            or boot.get("undefined")
            or f"{cohen['pairs']} pairs, {cohen['pairs_undefined']} undefined",
        }
        yield base | {
            "measure": "cohen_mean_weighted_by_shared_words",
            "value": cohen["mean_weighted_by_shared_words"],
            "note": cohen["undefined"],
        }
        for weighting, kappa in cohen.get("levels", {}).items():
            yield base | {
                "measure": f"cohen_levels_{weighting}",
                "value": kappa["value"],
                "method": f"Light's kappa on levels 0, 1, 2, {weighting}",
                "note": kappa["undefined"] or f"{kappa['pairs']} pairs, {kappa['pairs_undefined']} undefined",
            }
        coefficients = [("fleiss", result["fleiss"])]
        coefficients += [(f"gwet_{name}", gwet) for name, gwet in result.get("gwet", {}).items()]
        for name, coefficient in coefficients:
            yield base | _interval_row(name, coefficient, "", "t interval, clips as clusters")
            yield base | _interval_row(
                name, coefficient, "_words_independent", "t interval, words independent (irrCAC)"
            )
            yield base | _bootstrap_row(name, coefficient)
        for metric, alpha in result["krippendorff"].items():
            yield base | _bootstrap_row(f"krippendorff_{metric}", alpha)
    emphasis = report["emphasis"]
    for dimension, group, rates in _emphasis_groups(emphasis):
        for measure in ("label_rate", "mark_rate", "heavy_rate", "mean_scalar"):
            yield {
                "section": "emphasis",
                "dimension": dimension,
                "group": group,
                "measure": measure,
                "value": rates[measure],
                "words": rates["words"],
            }
    histograms, edges = emphasis["scalar_histogram"], emphasis["scalar_histogram"]["edges"]
    for dimension, group, counts in [("pooled", "", histograms.get("pooled", []))] + [
        ("language", language, counts) for language, counts in sorted(histograms.get("language", {}).items())
    ]:
        for index, count in enumerate(counts):
            closing = "]" if index == len(counts) - 1 else ")"
            yield {
                "section": "scalar_histogram",
                "dimension": dimension,
                "group": group,
                "measure": f"[{edges[index]}, {edges[index + 1]}{closing}",
                "value": count,
            }
    mismatch = emphasis["mismatch"]
    for measure in ("clips", "reports", "clips_with_reports", "clips_at_threshold"):
        yield {
            "section": "mismatch",
            "dimension": "pooled",
            "measure": measure,
            "value": mismatch[measure],
            "note": f"threshold {mismatch['threshold']}" if measure == "clips_at_threshold" else None,
        }
    excluded = set(report["annotators"]["excluded"])
    for row in report["annotators"]["rows"]:
        note = ",".join(row["flags"]) + (" (excluded)" if row["annotator"] in excluded else "")
        for measure in ("kappa", "marked_share", "attention_share", "median_seconds", "median_time_ratio", "clips"):
            yield {
                "section": "annotator",
                "dimension": "annotator",
                "group": row["annotator"],
                "measure": measure,
                "value": row.get(measure),  # median_time_ratio: absent from reports stored before it
                "words": row["words"],
                "note": row["kappa_reason"] if measure == "kappa" and row["kappa"] is None else note,
            }
    yield from _headphone_rows(report.get("headphone_check"))
    yield from drilldown_csv_rows(report.get("drilldown"))
    yield from adaptive_rows(report.get("adaptive_design"))


def adaptive_rows(section: dict | None):
    """An adaptive design (evaluation.reports.adaptive_disclosure): which, what it spent, its clips
    by annotations, agreement over all clips and over those at the target, and the selection effect
    in numbers. Nothing for a fixed design, whose CSV is as it was."""
    if not section:
        return
    target = section["target"]
    base = {"section": "adaptive_design"}
    design = base | {"dimension": "design", "group": section["mode"], "note": section["design"]}
    yield design | {"measure": "target", "value": target}
    yield design | {"measure": "annotations", "value": section["annotations"]}
    yield design | {"measure": "fixed_design_annotations", "value": section["fixed_design_annotations"]}
    below = "clips_stopped_early" if section.get("stops_early", True) else "clips_below_target"
    for key, measure in (("stopped_early", below), ("at_target", "clips_at_target"), ("past_target", "clips_past")):
        yield design | {"measure": measure, "value": section["clips"][key]}
    for name, row in section["agreement"].items():
        group = "all clips" if name == "all_clips" else f"clips annotated to {target} or more"
        for measure, undefined in (
            ("fleiss_kappa", "fleiss_kappa_undefined"),
            ("ordinal_alpha", "ordinal_alpha_undefined"),
        ):
            yield base | {
                "dimension": "agreement",
                "group": group,
                "measure": measure,
                "value": row[measure],
                "words": row["words"],
                "note": row[undefined],
            }
    effect = section.get("selection_effect")
    if not effect:  # a report stored before the selection effect was given
        return
    replication = effect["replication"]
    method = (
        f"study designer, {replication['replicates']} replicates of {replication['simulated_clips']} clips "
        "from this study's annotations as a pilot"
        if "replicates" in replication
        else None
    )
    for measure, value in effect.items():
        if measure == "replication":
            continue
        replicated = "replicated" in measure
        yield base | {
            "dimension": "selection_effect",
            "measure": measure,
            "value": value,
            "method": method if replicated else None,
            "note": replication.get("undefined") if replicated and value is None else None,
        }


def _headphone_rows(section: dict | None):
    """The headphone check's results as the report recorded them, and each group's mean kappa."""
    if not section:
        return
    results = section["results"]
    base = {"section": "headphone_check"}
    for measure, value in results["participants"].items():
        yield base | {"dimension": "participants", "measure": measure, "value": value}
    for test in results["tests"]:
        row = base | {"dimension": "test", "group": test["test"]}
        for measure in ("took", "passed", "failed", "in_progress"):
            yield row | {"measure": measure, "value": test[measure], "note": f"pass mark {test['pass_mark']}"}
        for number, count in enumerate(test["passed_on_try"], start=1):
            yield row | {"measure": f"passed_on_try_{number}", "value": count}
        for trial in test["by_trial"]:
            yield row | {
                "measure": f"right_at_trial_{trial['trial']}",
                "value": trial["correct"],
                "note": f"of {trial['answered']} answered",
            }
    for group in section["agreement_by_group"]:
        kappa = group["kappa_with_others"]
        ci = kappa["ci95"] or [None, None]
        yield base | {
            "dimension": "annotators",
            "group": group["label"],
            "measure": "mean_leave_one_out_kappa",
            "value": kappa["mean"],
            "ci_low": ci[0],
            "ci_high": ci[1],
            "method": "percentile bootstrap over annotators",
            "note": kappa["undefined"] or f"{kappa['annotators']} annotators",
        }


def _emphasis_groups(emphasis: dict):
    yield "pooled", "", emphasis["pooled"]
    for dimension in ("language", "variety", "emotion"):
        for group, rates in sorted(emphasis.get(dimension, {}).items()):
            yield dimension, group, rates


def _interval_row(name, result, suffix, method):
    """A linearized interval: se{suffix}, ci95{suffix}, and why it is missing when it is."""
    ci = result[f"ci95{suffix}"] or [None, None]
    return {
        "measure": name,
        "value": result["value"],
        "se": result[f"se{suffix}"],
        "ci_low": ci[0],
        "ci_high": ci[1],
        "method": method,
        "note": result["undefined"] or result.get(f"ci95{suffix}_undefined"),
    }


def _bootstrap_row(name, result):
    boot = result["bootstrap"] or {}
    ci = boot.get("ci95") or [None, None]
    return {
        "measure": name,
        "value": result["value"],
        "se": boot.get("se"),
        "ci_low": ci[0],
        "ci_high": ci[1],
        "method": "percentile bootstrap over clips",
        "note": result["undefined"] or boot.get("undefined"),
    }


def _cell(value) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def selection_statement(result: dict) -> list[str]:
    """What the report's figures are computed from, first thing on its page: every usable annotation,
    or what a subsample and left-out annotators removed, with the counts (issue 33: a subsample to
    the target had silently left out 17 of 20 clips)."""
    data, n = result["data"], result["parameters"]["subsample"]
    excluded = data["annotations_of_excluded_annotators"]
    by_subsample = data["annotations"] - excluded - data["annotations_used"]
    lines = [f"Computed from {data['annotations_used']} of {data['annotations']} usable annotations."]
    if n is None and not excluded:
        lines[0] += " Every usable annotation is used: no subsample, no annotator left out."
    if n is not None:
        short = data["clips_short"]
        lines.append(
            f"Subsample of {n} annotations per clip (the default is every annotation): it removed "
            f"{by_subsample} annotation(s)"
            + (f", among them every annotation of {short} clip(s) with fewer" if short else "")
            + "."
        )
    if excluded:
        lines.append(
            f"Flagged annotators left out ({len(result['annotators']['excluded'])}): "
            f"they removed {excluded} annotation(s)."
        )
    for reason, count in data["left_out_by_source"].items():
        lines.append(f"Not usable: {count} {reason}.")
    return lines
