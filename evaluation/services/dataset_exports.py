"""Dataset exports: a final label set (or a study's raw annotations) as one zip with a data card.

A researcher asks for an export (`dataset_export_request`); a worker builds it
(`dataset_export_run`, a background job on annotation.shared.jobs) in a temporary folder, zips it
reproducibly (evaluation.reports.zip_archive) and stores the zip in the storage backend; the
researcher downloads it through a short-lived link (`dataset_export_link`).

The same final set exported twice in the same format gives the same bytes, so an export that
already exists is handed out again rather than built anew. Raw exports are always built anew:
a study's annotations change while it runs.
"""

import hashlib
import re
import secrets
import tempfile
from pathlib import Path

from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction

from annotation.models import Study
from annotation.refusals import Refused
from annotation.shared.jobs import JobFailed, job_enqueue, job_run
from annotation.signed_links import Grant, granted_file, signed_file_url
from evaluation.models import DatasetExport, LabelSet
from evaluation.reports.zip_archive import zip_folder
from evaluation.services.dataset_export_cards import label_set_card, raw_card
from evaluation.services.dataset_export_files import label_set_files_write, raw_files_write

Format = DatasetExport.Format
LABEL_SET_FORMATS = (Format.JSONL, Format.CSV, Format.AUDIOFOLDER, Format.PARQUET, Format.TEXTGRID)
LINK_TTL_SECONDS = 600  # long enough to start a download; a download under way is not cut off
_LINK_PURPOSE = "evaluation.dataset-export-link"


class ExportRefused(Refused, ValueError):
    """An export that cannot be made from what was given; the message names the problem."""


def dataset_export_request(
    *,
    format: str,
    label_set: LabelSet | None = None,
    study: Study | None = None,
    include_prolific_ids: bool = False,
    user=None,
    enqueue: bool = True,
) -> DatasetExport:
    """A new export, built by a worker once this transaction commits (with enqueue=False, by
    whoever calls dataset_export_run next: the management command); or the same final set's
    earlier export in this format, when its file is still there."""
    _check_request(format, label_set, study, include_prolific_ids)
    if label_set is not None:
        earlier = _earlier_export(label_set, format)
        if earlier is not None:
            return earlier
    with transaction.atomic():
        export = DatasetExport.objects.create(
            format=format,
            label_set=label_set,
            study=study,
            include_prolific_ids=include_prolific_ids,
            created_by=user if user is not None and user.is_authenticated else None,
        )
        if enqueue:
            job_enqueue(export)
    return export


def _check_request(format: str, label_set, study, include_prolific_ids: bool) -> None:
    if format not in Format.values:
        raise ExportRefused(f"unknown export format {format!r}; the formats are {', '.join(Format.values)}")
    if format == Format.RAW:
        if study is None or label_set is not None:
            raise ExportRefused("a raw export is of one study's annotations: give a study and no label set")
        return
    if label_set is None or study is not None:
        raise ExportRefused(f"a {format} export is of a label set: give a label set and no study")
    if not label_set.is_final:
        raise ExportRefused(f"{label_set} is a {label_set.lifecycle}: only a final (or archived) label set is exported")
    if include_prolific_ids:
        raise ExportRefused("Prolific ids are only in raw exports; label sets hold opaque annotator ids")


def _earlier_export(label_set: LabelSet, format: str) -> DatasetExport | None:
    earlier = DatasetExport.objects.filter(
        label_set=label_set, format=format, status=DatasetExport.Status.SUCCEEDED
    ).exclude(file="")
    for export in earlier.order_by("-finished_at", "-pk")[:5]:
        if default_storage.exists(export.file.name):
            return export
    return None


def dataset_export_run(*, export_id: int) -> None:
    job_run(model=DatasetExport, job_id=export_id, work=_build)


def _build(export: DatasetExport, progress) -> dict:
    file_name = export_file_name(export)
    with tempfile.TemporaryDirectory(prefix="dataset-export-") as scratch:
        folder = Path(scratch) / "export"
        folder.mkdir()
        card = _raw(export, folder, progress) if export.format == Format.RAW else _label_set(export, folder, progress)
        (folder / "README.md").write_text(card, encoding="utf-8", newline="")
        archive = Path(scratch) / file_name
        zip_folder(folder, archive, progress=lambda done, total: progress("zipping", done, total))
        progress("storing", 0, 1)
        return {"file_name": file_name, **_store(archive)}


def _label_set(export: DatasetExport, folder: Path, progress) -> str:
    label_set = _exported_label_set(export)
    if not label_set.is_final:  # asked for while final; nothing un-finalizes a set, but the rows must be frozen
        raise JobFailed(f"{label_set} is not final; only final label sets are exported")
    written = label_set_files_write(export_format=export.format, label_set=label_set, folder=folder, progress=progress)
    return label_set_card(label_set=label_set, export_format=export.format, written=written)


def _raw(export: DatasetExport, folder: Path, progress) -> str:
    study = _exported_study(export)
    written = raw_files_write(
        study=study, include_prolific_ids=export.include_prolific_ids, folder=folder, progress=progress
    )
    return raw_card(study=study, include_prolific_ids=export.include_prolific_ids, written=written)


# An export has a label set, or (the raw format) a study: the check constraint of DatasetExport.
def _exported_label_set(export: DatasetExport) -> LabelSet:
    if export.label_set is None:
        raise ValueError(f"export {export.pk} ({export.format}) has no label set")
    return export.label_set


def _exported_study(export: DatasetExport) -> Study:
    if export.study is None:
        raise ValueError(f"export {export.pk} ({export.format}) has no study")
    return export.study


def export_file_name(export: DatasetExport) -> str:
    """`<set-name>-v<version>-<format>.zip`, or `<study>-raw[-prolific-ids].zip`."""
    if export.format == Format.RAW:
        base = f"{_exported_study(export).slug}-raw" + ("-prolific-ids" if export.include_prolific_ids else "")
    else:
        label_set = _exported_label_set(export)
        base = f"{_slug(label_set.name)}-v{label_set.version}-{export.format}"
    return f"{base}.zip"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:100] or "label-set"


def _store(archive: Path) -> dict:
    """Save the zip under a random folder (its link is signed; its path is not guessable)."""
    digest = hashlib.sha256()
    with archive.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(chunk)
    with archive.open("rb") as handle:
        name = default_storage.save(f"exports/{secrets.token_hex(16)}/{archive.name}", File(handle))
    return {"file": name, "size": archive.stat().st_size, "sha256": digest.hexdigest()}


def dataset_export_link(*, export: DatasetExport) -> str:
    """A download link valid for LINK_TTL_SECONDS: presigned on S3, the export_download view locally
    (a path: make it absolute with request.build_absolute_uri). Whoever holds it may download."""
    if export.status != DatasetExport.Status.SUCCEEDED or not export.file:
        raise ExportRefused(f"export {export.pk} has no file to download ({export.status})")
    return signed_file_url(
        export.file.name,
        purpose=_LINK_PURPOSE,
        view="evaluation:export_download",
        ttl_seconds=LINK_TTL_SECONDS,
        download_name=export.file_name,
    )


def dataset_export_grant(*, token: str) -> Grant:
    """The file a local download link grants; signing.BadSignature if forged or expired."""
    return granted_file(token, purpose=_LINK_PURPOSE)
