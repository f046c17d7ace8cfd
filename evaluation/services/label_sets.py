"""Label sets: create (a worker builds the rows), finalize (freeze), archive, delete drafts.

The build reads each study as its agreement report does (annotation.selectors.study_data)
and chooses annotations with the report's rule (evaluation.stats.selection), so a label set and
a report with the same parameters use exactly the same annotations. The arithmetic is in
evaluation.stats.label_sets; this module only moves rows in and out of the database.
"""

import hashlib
import math
import subprocess
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation.models import Study, StudyItem, WebhookEvent
from annotation.participant_names import opaque_annotator_id
from annotation.refusals import Refused
from annotation.selectors.study_data import study_data, study_thresholds
from annotation.services.webhooks import webhook_event_emit
from annotation.shared.jobs import JobFailed, job_enqueue, job_run
from evaluation.models import LabelSet, LabelSetClip
from evaluation.reports.agreement import ReportParameters, report_compute
from evaluation.reports.label_set_files import canonical_line
from evaluation.selectors.label_sets import clip_details, label_set_rows
from evaluation.services.adaptive_disclosures import clips_not_settled, study_adaptive_disclosure
from evaluation.services.agreement_reports import default_subsample
from evaluation.stats.annotator_models import DEFAULT_RESAMPLES, MODELS, AnnotatorModelFit, word_posteriors
from evaluation.stats.label_sets import (
    DEFAULT_PROPORTIONS,
    MMEE_AROUSAL,
    SCALE_STEPS,
    SplitClip,
    SplitRefused,
    arousal_of,
    assign_splits,
    check_arousal_mapping,
    check_proportions,
    emotions_without_arousal,
    labelled_clips,
    scale_steps,
)
from evaluation.stats.quality import Thresholds
from evaluation.stats.selection import select_annotations

ROOT = Path(__file__).resolve().parents[2]


class LabelSetRefused(Refused, ValueError):
    """A label-set action that the set's state or the studies do not allow; the message says why."""


@dataclass(frozen=True)
class LabelSetParameters:
    subsample: int | None = 10  # annotations per clip; None keeps every annotation
    seed: int = 0  # the subsample's seed (the agreement report's)
    split_seed: int = 0
    proportions: tuple[float, float, float] = DEFAULT_PROPORTIONS
    split_by_speaker: bool = False
    exclude_flagged: bool = False
    exclude_failed_checks: bool = False
    thresholds: Thresholds = field(default_factory=Thresholds)
    scale_steps: tuple[int, ...] = SCALE_STEPS
    arousal: dict[str, list[str]] = field(default_factory=lambda: check_arousal_mapping(MMEE_AROUSAL))
    resamples: int = 1000  # bootstrap resamples of the agreement summary
    # Model-based labels beside the majority's (evaluation.stats.annotator_models): "" is off.
    annotator_model: str = ""
    model_resamples: int = DEFAULT_RESAMPLES  # bootstrap resamples over clips for the reliabilities' SE

    def __post_init__(self):
        if self.subsample is not None and self.subsample < 1:
            raise ValueError("subsample must be at least 1 annotation per clip (or None for all)")
        if self.seed < 0 or self.split_seed < 0 or self.resamples < 0:
            raise ValueError("seeds and resamples cannot be negative")
        check_proportions(self.proportions)
        check_arousal_mapping(self.arousal)
        if self.annotator_model and self.annotator_model not in MODELS:
            raise ValueError(f"unknown annotator model {self.annotator_model!r}; choose one of {', '.join(MODELS)}")
        if self.model_resamples < 0:
            raise ValueError("model_resamples cannot be negative")

    def as_dict(self) -> dict:
        values = {**asdict(self), "proportions": list(self.proportions), "scale_steps": list(self.scale_steps)}
        if not self.annotator_model:
            # Off: stored as before model-based labels existed, so a set's parameters (and its
            # data card) stay the same as then.
            del values["annotator_model"], values["model_resamples"]
        return values

    @classmethod
    def from_dict(cls, values: dict) -> "LabelSetParameters":
        known = {name: values[name] for name in cls.__dataclass_fields__ if name in values}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown label-set parameter(s): {', '.join(unknown)}")
        if "thresholds" in known:
            known["thresholds"] = Thresholds(**known["thresholds"])
        for name in ("proportions", "scale_steps"):
            if name in known:
                known[name] = tuple(known[name])
        return cls(**known)

    def report_parameters(self, study: Study) -> ReportParameters:
        """The agreement report that sees exactly this set's annotations of `study`."""
        return ReportParameters(
            subsample=self.subsample,
            seed=self.seed,
            resamples=self.resamples,
            exclude_flagged=self.exclude_flagged,
            thresholds=self.thresholds,
            mismatch_threshold=study.mismatch_threshold,
        )


def label_set_default_parameters(*, studies: list[Study], **overrides) -> LabelSetParameters:
    """Every usable annotation (no subsample) and the first study's review thresholds, as the
    agreement report takes them (evaluation.services.agreement_reports.default_subsample)."""
    first = studies[0]
    thresholds = study_thresholds(study=first)
    return LabelSetParameters(**{"subsample": default_subsample(first), "thresholds": thresholds, **overrides})


def label_set_create(
    *, name: str, studies: list[Study], parameters: LabelSetParameters, user=None, enqueue: bool = True
) -> LabelSet:
    """A new draft (the next version of `name`), built by a worker once this transaction commits
    (or, with enqueue=False, by whoever calls label_set_build next: the management command)."""
    name = name.strip()
    if not name:
        raise LabelSetRefused("a label set needs a name")
    if not studies:
        raise LabelSetRefused("a label set needs at least one study")
    not_emphasis = [study.slug for study in studies if not study.capabilities.answers_are_word_marks]
    if not_emphasis:
        raise LabelSetRefused(f"label sets are made from emphasis studies; not: {', '.join(not_emphasis)}")
    scales = {study.scale for study in studies}
    if len(scales) > 1:
        raise LabelSetRefused("a label set's studies share one scale: binary and three-level studies do not mix")
    binary = scales == {Study.Scale.BINARY}
    with transaction.atomic():
        latest = LabelSet.objects.select_for_update().filter(name=name).aggregate(latest=Max("version"))["latest"]
        label_set = LabelSet.objects.create(
            name=name,
            version=(latest or 0) + 1,
            parameters=parameters.as_dict(),
            label_kind=LabelSet.LabelKind.BINARY if binary else LabelSet.LabelKind.LEVELS,
            source=_imported_studies(studies),
            created_by=user if user is not None and user.is_authenticated else None,
        )
        label_set.studies.set(studies)
        if enqueue:
            job_enqueue(label_set)
    return label_set


def _imported_studies(studies: list[Study]) -> dict:
    """Where studies imported from a published crowd (annotation.services.crowd_study_import)
    came from, for the set's provenance; {} for studies run here."""
    imported = {study.slug: study.selection["imported"] for study in studies if "imported" in study.selection}
    if not imported:
        return {}
    datasets = sorted({entry.get("dataset", "") for entry in imported.values()})
    return {"dataset": "; ".join(datasets), "studies": imported}


def label_set_build(*, label_set_id: int) -> None:
    job_run(model=LabelSet, job_id=label_set_id, work=_build)


def _build(label_set: LabelSet, progress) -> dict:
    if label_set.lifecycle != LabelSet.Lifecycle.DRAFT or label_set.clips.exists():
        raise JobFailed("only a new draft is built; its rows are never rebuilt")
    parameters = LabelSetParameters.from_dict(label_set.parameters)
    studies = list(label_set.studies.order_by("slug"))
    entries, left_out, agreement, fits, adaptive = [], {}, {}, {}, {}
    for index, study in enumerate(studies):
        progress(f"reading {study.slug}", index, len(studies))
        data = study_data(study=study)
        selection = select_annotations(
            data,
            thresholds=parameters.thresholds,
            exclude_flagged=parameters.exclude_flagged,
            n=parameters.subsample,
            seed=parameters.seed,
            exclude_failed_checks=parameters.exclude_failed_checks,
        )
        clips = labelled_clips(data, selection.kept)
        details = clip_details(study=study, clip_keys=[clip.key for clip in clips])
        if parameters.annotator_model and clips:
            progress(f"annotator model of {study.slug}", index, len(studies))
            fits[study.slug] = _model_fit(study, data, selection.kept, parameters)
        entries += [(study, clip, details[clip.key]) for clip in clips]
        left_out[study.slug] = _left_out(study, data, selection)
        if study.is_adaptive:
            progress(f"adaptive design of {study.slug}", index, len(studies))
            adaptive[study.slug] = study_adaptive_disclosure(study=study, data=data, rows=selection.kept)
            left_out[study.slug]["clips_not_settled"] = clips_not_settled(study=study, data=data, kept=selection.kept)
        progress(f"agreement of {study.slug}", index, len(studies))
        report = report_compute(data, parameters.report_parameters(study), selection=selection)
        agreement[study.slug] = _agreement_summary(report)
    _refuse_duplicate_clips(entries)
    progress("splitting", 0, len(entries))
    rows = _rows(label_set, entries, parameters, fits)
    LabelSetClip.objects.bulk_create(rows, batch_size=2000)
    progress("stored", len(rows), len(rows))
    summary = label_set_summary(rows, left_out, agreement)
    # An arousal left empty says why: every emotion the mapping did not cover, with its clips.
    summary["emotions_without_arousal"] = emotions_without_arousal([row.emotion for row in rows], parameters.arousal)
    if adaptive:  # only then: a set of fixed designs has the summary (and the data card) it always had
        summary["adaptive_design"] = adaptive
    if not parameters.annotator_model:
        return {"summary": summary}
    return {"summary": summary, "annotator_model": _model_record(parameters, fits)}


@dataclass(frozen=True)
class _StudyFit:
    fit: AnnotatorModelFit
    clip_index: dict[str, int]  # clip key -> the fit's clip index
    annotator_index: dict[str, int]  # annotator key -> the fit's annotator index


def _model_fit(study: Study, data, kept, parameters: LabelSetParameters) -> _StudyFit:
    """The annotator model on exactly the annotations the set keeps of `study`."""
    try:
        fit = word_posteriors(
            clip=data.clip[kept],
            annotator=data.annotator[kept],
            levels=data.levels[kept],
            n_annotators=len(data.annotator_keys),
            model=parameters.annotator_model,
            resamples=parameters.model_resamples,
            seed=parameters.seed,
        )
    except ValueError as error:
        raise JobFailed(f"the annotator model cannot be fitted to {study.slug}: {error}") from None
    return _StudyFit(
        fit=fit,
        clip_index={key: i for i, key in enumerate(data.clip_keys)},
        annotator_index={key: i for i, key in enumerate(data.annotator_keys)},
    )


def _model_record(parameters: LabelSetParameters, fits: dict[str, _StudyFit]) -> dict:
    """What the set keeps of its model: which one, when fitted, how long, and per study each
    annotator's reliability with its SE (by opaque id)."""
    studies: dict[str, dict[str, Any]] = {}
    for slug, study_fit in sorted(fits.items()):
        fit, names = study_fit.fit, {i: key for key, i in study_fit.annotator_index.items()}
        studies[slug] = {
            "fitted_at": fit.fitted_at,
            "fit_seconds": round(fit.fit_seconds, 3),
            # The model's labels against the majority's on this study's own annotations; the
            # majority's stay the recommended labels unless the model's predict held-out
            # listeners better (evaluation.stats.annotator_models.HeldOutStanding).
            "standing": fit.standing.as_dict() if fit.standing else None,
            "recommended_labels": "model" if fit.recommended() else "majority",
            "annotators": {
                opaque_annotator_id(slug, names[i]): values
                for i, values in enumerate(fit.annotators())
                if values["words"]
            },
        }
    first = next(iter(fits.values()), None)
    return {
        "model": parameters.annotator_model,
        "description": first.fit.description if first else parameters.annotator_model,
        "fitted_at": max((study["fitted_at"] for study in studies.values()), default=""),
        "se_method": first.fit.se_method if first else "",
        "reliability": "Youden's J: P(mark | truly emphasized) - P(mark | not emphasized)",
        "studies": studies,
    }


def _refuse_duplicate_clips(entries) -> None:
    seen: dict[str, str] = {}
    for study, clip, _ in entries:
        if clip.key in seen:
            raise JobFailed(
                f"clip {clip.key!r} is in studies {seen[clip.key]!r} and {study.slug!r}: "
                "a label set holds each clip once"
            )
        seen[clip.key] = study.slug


def _rows(label_set: LabelSet, entries, parameters: LabelSetParameters, fits: dict) -> list[LabelSetClip]:
    split_clips = [SplitClip(clip.key, detail.language, detail.variety, detail.speaker) for _, clip, detail in entries]
    try:
        splits = assign_splits(
            split_clips,
            seed=parameters.split_seed,
            proportions=parameters.proportions,
            by_speaker=parameters.split_by_speaker,
        )
    except SplitRefused as refused:
        raise JobFailed(str(refused)) from None
    train = [clip for clip in split_clips if splits[clip.key] == "train"]
    steps = scale_steps(train, seed=parameters.split_seed, steps=parameters.scale_steps)
    ordered = sorted(entries, key=lambda entry: (entry[0].slug, entry[1].key))
    return [
        LabelSetClip(
            label_set=label_set,
            position=position,
            clip_id=detail.pk,
            study=study,
            clip_key=clip.key,
            split=splits[clip.key],
            language=detail.language,
            variety=detail.variety,
            speaker=detail.speaker,
            emotion=detail.emotion,
            arousal=arousal_of(detail.emotion, parameters.arousal),
            scale_step=steps.get(clip.key),
            duration=detail.duration,
            annotators=[opaque_annotator_id(study.slug, key) for key in clip.annotators],
            words=_words(clip, detail, fits.get(study.slug), binary_only=study.scale == Study.Scale.BINARY),
            annotator_reliability=_reliabilities(clip, fits.get(study.slug)),
        )
        for position, (study, clip, detail) in enumerate(ordered)
    ]


def _reliabilities(clip, study_fit: _StudyFit | None) -> list[list[float | None]] | None:
    """[reliability, SE] of each of the clip's annotators, in the order of its `annotators`."""
    if study_fit is None:
        return None
    fit = study_fit.fit
    return [
        [_rounded(fit.reliability[i]), _rounded(fit.reliability_se[i])]
        for i in (study_fit.annotator_index[key] for key in clip.annotators)
    ]


def _rounded(value) -> float | None:
    """Six decimals: the figures are estimates, and fewer digits keep the rows the same across
    machines whose last bits of floating point differ."""
    return None if math.isnan(value) else round(float(value), 6)


def _words(clip, detail, study_fit: _StudyFit | None = None, *, binary_only: bool = False) -> list[dict]:
    # A binary study's levels are 0 or 1: the scalar mean of 0 and 0.5 would read as half the
    # emphasis it is, so such a set has binary labels only.
    words = [
        {
            "index": index,
            "text": text,
            "start": start,
            "end": end,
            "binary": clip.labels.binary[index],
            "scalar": None if binary_only else clip.labels.scalar[index],
            "levels": [int(level) for level in clip.levels[:, index]],
        }
        for index, (text, start, end) in enumerate(detail.words)
    ]
    if study_fit is not None:
        posterior = study_fit.fit.clip_posterior(study_fit.clip_index[clip.key])
        for word in words:
            word["posterior"] = _rounded(posterior[word["index"]]) if word["index"] < posterior.size else None
    return words


def _left_out(study: Study, data, selection) -> dict:
    return {
        "clips_excluded_in_review": StudyItem.objects.filter(study=study, review=StudyItem.Review.EXCLUDED).count(),
        "clips_short": [{"clip": key, "annotations": n} for key, n in selection.short],
        "clips_without_annotations": _clips_without_annotations(study, data, selection),
        "annotations_removed_by_subsample": int((selection.in_scope & ~selection.kept).sum()),
        "annotators_excluded": [
            {
                "annotator": opaque_annotator_id(study.slug, data.annotator_keys[i]),
                "flags": list(selection.quality[i].flags),
                "failed_checks": bool(((data.check_annotator == i) & ~data.check_passed).any()),
            }
            for i in selection.excluded
        ],
        "annotations_left_out_by_source": dict(sorted(data.notes.items())),
    }


def _clips_without_annotations(study: Study, data, selection) -> list[dict]:
    """The study's clips (excluded ones apart) that no annotation in scope labels, with why: a clip
    that is also an attention check is never handed out (issue 33), others got none that counts."""
    scoped = np.bincount(data.clip[selection.in_scope], minlength=len(data.clip_keys))
    every = np.bincount(data.clip, minlength=len(data.clip_keys))
    checks = set(study.attention_checks.values_list("clip__external_id", flat=True))
    rows = []
    for index, key in enumerate(data.clip_keys):
        if scoped[index]:
            continue
        if key in checks:
            why = "an attention check of the study: never handed out as a clip to annotate"
        elif every[index]:
            why = "its annotations are all by annotators left out"
        else:
            why = "no annotation that counts (not annotated yet, or only by rejected participants)"
        rows.append({"clip": key, "why": why})
    return rows


def _agreement_summary(report: dict) -> dict:
    """The pooled and per-language headline figures of the report computed on the same annotations."""

    def figures(result: dict) -> dict:
        return {
            "clips": result["clips"],
            "words": result["words"],
            "annotators": result["annotators"],
            "cohen": result["cohen"]["value"],
            "fleiss": result["fleiss"]["value"],
            "fleiss_ci95": result["fleiss"]["ci95"],
            "alpha_ordinal": result["krippendorff"]["ordinal"]["value"],
            "alpha_ordinal_ci95": (result["krippendorff"]["ordinal"]["bootstrap"] or {}).get("ci95"),
        }

    return {
        "pooled": figures(report["agreement"]["pooled"]),
        "language": {lang: figures(result) for lang, result in report["agreement"].get("language", {}).items()},
    }


def label_set_summary(rows: list[LabelSetClip], left_out: dict, agreement: dict) -> dict:
    """A set's sizes per language and split, what was left out, and its agreement (LabelSet.summary)."""
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        per_language = counts.setdefault(row.language, {})
        per_language[row.split] = per_language.get(row.split, 0) + 1
    return {
        "clips": len(rows),
        "words": sum(len(row.words) for row in rows),
        "annotations": sum(len(row.annotators) for row in rows),
        "counts": counts,
        "left_out": left_out,
        "agreement": agreement,
    }


def label_set_finalize(*, label_set: LabelSet, user=None) -> LabelSet:
    """Freeze a built draft: record the checksum of its rows and the code version. Final sets never change."""
    if label_set.status != LabelSet.Status.SUCCEEDED:
        raise LabelSetRefused(f"{label_set} is not built yet ({label_set.status}); it can be finalized once built")
    checksum = label_set_checksum(label_set_id=label_set.pk)
    frozen = LabelSet.objects.filter(pk=label_set.pk, lifecycle=LabelSet.Lifecycle.DRAFT).update(
        lifecycle=LabelSet.Lifecycle.FINAL,
        checksum=checksum,
        code_version=code_version(),
        finalized_at=timezone.now(),
        finalized_by=user if user is not None and user.is_authenticated else None,
    )
    if not frozen:
        raise LabelSetRefused(f"{label_set} is already {LabelSet.objects.get(pk=label_set.pk).lifecycle}")
    label_set.refresh_from_db()
    webhook_event_emit(
        event_type=WebhookEvent.LABEL_SET_FINALIZED,
        data={
            "label_set": label_set.pk,
            "name": label_set.name,
            "version": label_set.version,
            "checksum": label_set.checksum,
        },
    )
    return label_set


def label_set_checksum(*, label_set_id: int) -> str:
    digest = hashlib.sha256()
    for row in label_set_rows(label_set_id=label_set_id):
        digest.update((canonical_line(row) + "\n").encode())
    return digest.hexdigest()


def label_set_archive(*, label_set: LabelSet) -> LabelSet:
    if not LabelSet.objects.filter(pk=label_set.pk, lifecycle=LabelSet.Lifecycle.FINAL).update(
        lifecycle=LabelSet.Lifecycle.ARCHIVED
    ):
        raise LabelSetRefused(f"only a final label set can be archived; {label_set} is {label_set.lifecycle}")
    label_set.refresh_from_db()
    return label_set


def label_set_delete(*, label_set: LabelSet) -> None:
    """Drafts only: a final set stays, for the results and exports made from it."""
    if label_set.is_final:
        raise LabelSetRefused(f"{label_set} is final: archive it instead of deleting it")
    if label_set.status in (LabelSet.Status.QUEUED, LabelSet.Status.RUNNING):
        raise LabelSetRefused(f"{label_set} is being built; delete it once the build has ended")
    label_set.delete()


def code_version() -> str:
    """The package version and, in a git checkout, the commit (with +dirty for uncommitted changes)."""
    try:
        package = version("emphasis-platform")
    except PackageNotFoundError:
        package = "unknown"
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return package
    return f"{package}+g{commit}{'.dirty' if dirty else ''}"
