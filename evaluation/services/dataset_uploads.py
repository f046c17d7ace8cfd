"""dataset_upload_import: a public emphasis dataset uploaded as a .zip and extracted to `root`,
imported as import_emphasis_dataset imports it. The API (evaluation/api/dataset_imports.py) and
the admin's upload page (evaluation/admin/dataset_imports.py) both call it, so that the two
read the archive alike: `data` and `audio` are paths inside it (defaults: gold_df.json,
annotations.json, or the whole archive for the Hugging Face layouts; the audio at its root).
"""

from dataclasses import dataclass, field
from pathlib import Path

from annotation.ingest.dataset_clips import DatasetProblem
from annotation.services.crowd_study_import import crowd_study_import
from evaluation.models import LabelSet
from evaluation.services.label_set_imports import crowd_label_set_step, label_set_import

CROWD_FORMAT = "morrison"
DEFAULT_DATA = {"emphassess": "gold_df.json", CROWD_FORMAT: "annotations.json"}
STUDY_PERMISSION = "annotation.add_study"  # morrison makes a study


@dataclass(frozen=True)
class DatasetUpload:
    format: str
    name: str
    archive_name: str
    data: str = ""
    audio: str = ""
    corpus: str = ""
    splits: str = "given"
    split_seed: int = 0
    label_source: str | None = None
    draft: bool = False
    label_set: str = ""  # morrison: also make this label set
    keep_all_annotators: bool = False
    skip_invalid: bool = False


@dataclass
class DatasetUploadResult:
    label_set: LabelSet | None
    study: object | None  # morrison's closed study
    summary: dict
    skipped: list[dict] = field(default_factory=list)  # with skip_invalid: where, clip_id, field, reason


def dataset_upload_import(*, upload: DatasetUpload, root: Path, user) -> DatasetUploadResult:
    """ImportRefused, LabelSetRefused or FileNotFoundError as the command raises them."""
    data = root / (upload.data or DEFAULT_DATA.get(upload.format, ""))
    audio = root / upload.audio if upload.audio else root
    if upload.format == CROWD_FORMAT:
        report = crowd_study_import(
            path=data,
            audio_folder=audio,
            study_name=upload.name,
            corpus_name=upload.corpus or None,
            apply_filters=not upload.keep_all_annotators,
            then=crowd_label_set_step(name=upload.label_set, user=user),
            skip_invalid=upload.skip_invalid,
        )
        skipped = [problem.as_dict() for problem in report.skipped]
        made = report.made if isinstance(report.made, LabelSet) else None  # `then` made a label set
        return DatasetUploadResult(made, report.study, report.as_dict(), skipped)
    label_set = label_set_import(
        format_key=upload.format,
        path=data,
        audio_folder=audio,
        name=upload.name,
        corpus_name=upload.corpus or None,
        splits=upload.splits,
        split_seed=upload.split_seed,
        label_source=upload.label_source,
        finalize=not upload.draft,
        audio_named=f"uploaded archive {upload.archive_name}" + (f", {upload.audio}" if upload.audio else ""),
        skip_invalid=upload.skip_invalid,
        user=user,
    )
    return DatasetUploadResult(label_set, None, label_set.summary, label_set.source.get("skipped", []))


def problem_rows(problems: list) -> list[dict]:
    """A refusal's problems (a dataset's records, or the staged manifest's rows) as where, clip_id,
    field and reason, as the admin page lists them (the API answers annotation.refusals.Problem)."""
    return [
        {
            "where": problem.where if isinstance(problem, DatasetProblem) else f"line {problem.line}",
            "clip_id": problem.clip_id,
            "field": problem.field,
            "reason": problem.reason,
        }
        for problem in problems
    ]
