"""Admin uploads: queue an archive for import, and run the queued job."""

import logging
import tempfile
import uuid
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from django.core.files import File
from django.core.files.storage import default_storage

from annotation.ingest.errors import ImportRefused, SourceRefused
from annotation.ingest.source import check_members, relative_path_problem
from annotation.models import ImportJob
from annotation.services.corpus_import import corpus_import, limits_from_settings
from annotation.shared.jobs import JobFailed, job_enqueue, job_run

logger = logging.getLogger(__name__)


def corpus_import_create(*, upload, corpus_name: str, skip_invalid: bool, user) -> ImportJob:
    """Store an uploaded .zip and queue its import once the job row is committed. An archive
    that its directory shows cannot be extracted (its declared sizes, its entries' names) is
    refused here, before it is stored."""
    if not zipfile.is_zipfile(upload):
        raise ValueError(f"{upload.name}: not a .zip archive")
    upload.seek(0)
    try:
        with zipfile.ZipFile(upload) as bundle:
            check_members(upload.name, bundle.infolist(), limits_from_settings())
    except SourceRefused as refused:
        raise ValueError(str(refused)) from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as error:
        raise ValueError(f"{upload.name}: not a .zip archive ({error})") from None
    upload.seek(0)
    stored = default_storage.save(f"imports/{uuid.uuid4().hex}.zip", upload)
    job = ImportJob.objects.create(
        corpus_name=corpus_name,
        archive=stored,
        archive_name=upload.name[:300],
        skip_invalid=skip_invalid,
        created_by=user,
    )
    job_enqueue(job)
    return job


@contextmanager
def folder_upload_zip(*, files: list, paths: list[str]) -> Iterator[File | None]:
    """Pack a folder uploaded file by file into a .zip, so that it takes the
    same checked path as an uploaded archive. Yields None when there are no files."""
    if not files:
        yield None
        return
    with tempfile.NamedTemporaryFile(suffix=".zip") as handle:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED) as bundle:
            for upload, path in zip(files, paths, strict=True):
                problem = relative_path_problem(path)
                if problem:
                    raise ValueError(f"{path!r} {problem}")
                with bundle.open(path, "w") as target:
                    for chunk in upload.chunks():
                        target.write(chunk)
        handle.seek(0)
        top = PurePosixPath(paths[0]).parts[0] if len(PurePosixPath(paths[0]).parts) > 1 else "folder"
        yield File(handle, name=f"{top}.zip")


def corpus_import_run(*, job_id: int) -> None:
    job_run(model=ImportJob, job_id=job_id, work=_import)


def _import(job: ImportJob, progress) -> dict:
    try:
        return _import_archive(job, progress)
    finally:
        _delete_quietly(job.archive.name)


def _delete_quietly(name: str) -> None:
    # A storage hiccup here must not turn an import that succeeded into a failure.
    try:
        default_storage.delete(name)
    except Exception:
        logger.exception("could not delete uploaded archive %s", name)


def _import_archive(job: ImportJob, progress) -> dict:
    with tempfile.TemporaryDirectory(prefix="import-job-") as folder:
        local = Path(folder) / "upload.zip"
        with default_storage.open(job.archive.name, "rb") as source, open(local, "wb") as sink:
            while chunk := source.read(1024 * 1024):
                sink.write(chunk)
        try:
            report = corpus_import(
                path=local, corpus_name=job.corpus_name, skip_invalid=job.skip_invalid, progress=progress
            )
        except ImportRefused as refused:
            # Each problem names its file too (the manifest), as the API shows it.
            problems = [{"file": refused.manifest_name, **problem.as_dict()} for problem in refused.problems]
            raise JobFailed(f"{len(problems)} bad row(s); nothing was imported", problems=problems) from None
        except SourceRefused as refused:
            raise JobFailed(str(refused)) from None
    summary = report.as_dict()
    return {"problems": summary.pop("problems"), "summary": summary}
