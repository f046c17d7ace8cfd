"""The README.md (data card) of each export: what the data is, how it was made, what is in it.

A label set's card holds nothing that differs between two exports of the same final set (no
export time, no user), so the same set gives the same zip, byte for byte.
"""

import json

from django.db.models import Max

from annotation.models import Annotation, Study
from evaluation.models import DatasetExport, LabelSet
from evaluation.reports.export_cards import adaptive_lines, agreement_lines, left_out_lines
from evaluation.reports.label_set_files import data_card
from evaluation.services.dataset_export_files import Written
from evaluation.services.label_sets import code_version


def label_set_card(*, label_set: LabelSet, export_format: str, written: Written) -> str:
    summary, parameters = label_set.summary, label_set.parameters
    studies = label_set.studies.order_by("slug")
    facts = {
        "label set": f"{label_set.name}, version {label_set.version} ({label_set.lifecycle})",
        "format": DatasetExport.Format(export_format).label,
        "labels": label_set.provenance,
        **_imported_from(label_set.source),
        "studies": "; ".join(f"{study.slug} ({study.name})" for study in studies) or "none (an imported set)",
        "clips": summary.get("clips"),
        "words": summary.get("words"),
        "annotations": summary.get("annotations"),
        "annotations per clip": parameters.get("subsample") or "all",
        "split seed": parameters.get("split_seed"),
        "split proportions (train, validation, test)": ", ".join(str(p) for p in parameters.get("proportions", [])),
        "splits by speaker": "yes" if parameters.get("split_by_speaker") else "no",
        **_unmapped_emotions(summary),
        # Studies run with an adaptive design (a set of fixed designs has no such lines).
        **adaptive_lines(summary.get("adaptive_design", {})),
        **_annotator_model(label_set.annotator_model),
        # sort_keys: the parameters as stored, in the same order on any database
        "parameters": "`" + json.dumps(parameters, sort_keys=True, ensure_ascii=False) + "`",
        "checksum of the rows (SHA-256)": label_set.checksum,
        "code version": label_set.code_version,
        **written.facts,
    }
    return data_card(
        title=f"{label_set.name} v{label_set.version}: {facts['format']}",
        facts=facts,
        counts=summary.get("counts", {}),
        agreement=agreement_lines(summary.get("agreement", {})),
        files=written.files,
        left_out=left_out_lines(summary.get("left_out", {})) + written.left_out,
    )


def _imported_from(source: dict) -> dict:
    """The files a set (or its studies) was imported from, with their checksum; none when run here."""
    if "files" in source:
        return {
            "imported from": f"{', '.join(source['files'])} (SHA-256 {source['sha256']}), "
            f"audio from {source['audio_folder']}"
        }
    imported = source.get("studies", {})
    if not imported:
        return {}
    entries = [f"{slug}: {entry['file']} (SHA-256 {entry['sha256']})" for slug, entry in sorted(imported.items())]
    return {"imported from": "; ".join(entries)}


def _unmapped_emotions(summary: dict) -> dict:
    """The emotions that got no arousal (sets built before this was recorded say nothing)."""
    if "emotions_without_arousal" not in summary:
        return {}
    missed = summary["emotions_without_arousal"]
    listed = ", ".join(f"{emotion} ({clips} clip{'s' if clips != 1 else ''})" for emotion, clips in missed.items())
    return {"emotions without an arousal (their `arousal` is empty)": listed or "none"}


def _annotator_model(model: dict) -> dict:
    """Which model gave the posteriors and reliabilities, and when it was fitted (nothing when off)."""
    if not model:
        return {}
    fitted = "; ".join(
        f"{slug} at {study['fitted_at']} in {study['fit_seconds']:.1f} s" for slug, study in model["studies"].items()
    )
    return {
        "annotator model": model["description"],
        "annotator model fitted": fitted or "no study had annotations to fit",
        "annotator reliability": f"{model['reliability']}; standard errors by {model['se_method']}",
        **model_standing(model),
    }


def model_standing(model: dict) -> dict:
    """The model's labels against the majority's on each study's own annotations, and which the
    set recommends (nothing for a set built before the standing was measured)."""
    studies = {slug: study for slug, study in model.get("studies", {}).items() if "recommended_labels" in study}
    if not studies:
        return {}
    lines = [f"{slug}: {standing_sentence(study)}" for slug, study in studies.items()]
    return {"model labels against the majority": "; ".join(lines)}


def standing_sentence(study: dict) -> str:
    """One study's standing in words: the agreements with a held-out listener, the difference with
    its interval, the verdict and the labels recommended."""
    standing = study["standing"]
    recommended = (
        "the model's labels are recommended"
        if study["recommended_labels"] == "model"
        else ("the majority's labels stay the recommended ones")
    )
    if not standing:
        return f"not measured (no word had two annotations); {recommended}"
    low, high = standing["interval"]
    return (
        f"a held-out listener's mark agrees with the model's label {100 * standing['model_agreement']:.1f} % "
        f"of the time and with the majority's {100 * standing['majority_agreement']:.1f} % "
        f"({100 * standing['difference']:+.2f} points, 95 % interval {100 * low:+.2f} to {100 * high:+.2f}, "
        f"{standing['held_out']} marks held out): {standing['verdict']}; {recommended}"
    )


def raw_card(*, study: Study, include_prolific_ids: bool, written: Written) -> str:
    last = Annotation.objects.filter(participant__study=study).aggregate(last=Max("submitted_at"))["last"]
    facts = {
        "study": f"{study.slug} ({study.name})",
        "kind": study.get_kind_display(),
        "status": study.get_status_display(),
        "corpus": study.corpus.name,
        "participants": study.participants.count(),
        "annotators shown as": "opaque ids (a-<16 hex digits>), the same as in the study's reports and label sets, and in "
        "`participant` the Prolific id (or local #<pk>): personal data, handle accordingly"
        if include_prolific_ids
        else "opaque ids (a-<16 hex digits>), the same as in the study's label sets",
        "annotations up to": last.isoformat() if last else "none yet",
        "code version": code_version(),
        **written.facts,
    }
    return data_card(
        title=f"Raw annotations: {study.name}",
        facts=facts,
        counts={},
        agreement={},
        files=written.files,
        left_out=["nothing: every submitted annotation is here, rejected participants and attention checks included"],
    )
